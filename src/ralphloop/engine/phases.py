"""The phases of an iteration that touch the world: prepare the prompt, run the agent, observe what it did,
verify it with the hooks and quality gates. Each returns a frozen value; iteration.py strings them together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from ralphloop import git
from ralphloop.analysis.signals import Analysis, analyze, with_records
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.errors import RalphError
from ralphloop.events import AgentActivity, AgentOutput, IterationStarted, Notice, Slot
from ralphloop.hooks.gates import GateVerdict
from ralphloop.hooks.runner import HookContext
from ralphloop.process import run_agent_process
from ralphloop.prompt import PromptParts, build_prompt
from ralphloop.protocols import AgentRequest, AgentResult, ErrorKind, Task, TaskView, iso
from ralphloop.records import signal_log


@dataclass(frozen=True, slots=True)
class Prepared:
    """An iteration about to start its agent."""

    number: int
    task: Task
    view: TaskView  # the task state at its start
    start: git.WorkTree | None
    prompt: str
    request: AgentRequest
    log_path: str
    context: HookContext
    signals_offset: int
    began: float  # monotonic
    attempt: int  # 1 for the task's first attempt, 2 after one failed ...


@dataclass(frozen=True, slots=True)
class Seen:
    """What the agent left: the task file re-read once, its signals and their analysis."""

    view: TaskView
    broken: str | None  # the task file was invalid after the agent (then `view` is the one before)
    analysis: Analysis
    interrupted: bool
    clean: bool  # the agent ran to its end: its reply is worth reading for results
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Checks:
    """What the post_iteration hooks and the quality gates made of an iteration."""

    claimed: bool = False  # the iteration says something is done: the gates ran
    gates: GateVerdict = field(default_factory=GateVerdict)
    verify_failed: tuple[str, ...] = ()  # post_iteration hooks that exited 75
    notes: tuple[str, ...] = ()
    prompt_notes: tuple[str, ...] = ()


def prompt_for(run: Run, state: LoopState, number: int, task: Task) -> tuple[str, AgentRequest]:
    """The prompt of iteration `number` and the request the agent gets (also what --dry-run shows)."""
    root = run.paths.project_root
    parts = PromptParts(
        iteration=number,
        feature=run.paths.name,
        feature_dir=os.path.relpath(run.paths.dir, root),
        prd=os.path.relpath(run.source.path, root),
        progress=os.path.relpath(run.paths.progress, root),
        progress_file=run.paths.progress,
        task_id=task.id,
        task_section=run.source.describe(task),
        notes=state.notes,
    )
    prompt = build_prompt(run.policy.template, parts, run.policy.progress_bytes)
    request = AgentRequest(
        prompt=prompt,
        iteration=number,
        project_root=root,
        feature_dir=run.paths.dir,
        prompt_file=run.paths.iteration_prompt(number),
        task_id=task.id,
        started_at=run.clock.now(),
        model=run.policy.model,
        resume_session=state.session or None,
    )
    return prompt, request


def prepare(run: Run, state: LoopState, view: TaskView, start: git.WorkTree | None, slot: Slot) -> Prepared:
    """Everything before the agent starts: its prompt written, the number reserved (state.json, by the
    records), the format's stats, the pre_iteration hooks."""
    began = run.clock.monotonic()
    task = view.next_task
    assert task is not None
    number = state.number + 1
    prompt, request = prompt_for(run, state, number, task)
    with open(request.prompt_file, "w", encoding="utf-8") as handle:
        handle.write(prompt)
    log_path = run.paths.iteration_log(number)
    run.source.begin(number, run.policy.max_iterations, iso(run.clock.now()))
    attempt = state.attempt_at(task.id) + 1
    reserved = replace(state, number=number, task=task.id, retries=attempt - 1).persisted()
    run.emit(
        IterationStarted(
            run_id=run.id,
            number=number,
            tally=state.tally,
            max_iterations=run.policy.max_iterations,
            task_id=task.id,
            task_title=task.title,
            log_path=log_path,
            attempt=attempt,
            max_retries=run.policy.max_retries,
            slot=slot,
            started_at=run.clock.now(),
            prompt_path=request.prompt_file,
            state=reserved,
        )
    )
    context = run.context(task.id, number, log_path)
    run.hooks.lifecycle("pre_iteration", context)
    offset = signal_log.size(run.paths.signals)
    return Prepared(number, task, view, start, prompt, request, log_path, context, offset, began, attempt)


def run_agent(run: Run, prepared: Prepared, session: str) -> tuple[AgentResult, str]:
    """One agent process; once more in a fresh session when the session it was to resume is gone.
    Returns the result and the session to resume next (the agent's own, when it reports one)."""
    request = prepared.request
    result = _run_once(run, request, prepared.log_path)
    if result.error_kind is ErrorKind.RESUME and request.resume_session:
        run.emit(Notice("warning", f"{result.error}; running this iteration in a fresh session"))
        with open(prepared.log_path, "ab") as log:
            log.write(b"\n[ralph: the session to resume is gone; running again in a fresh session]\n")
        session = ""
        result = _run_once(run, replace(request, resume_session=None), prepared.log_path)
    return result, result.session_id or session


def _run_once(run: Run, request: AgentRequest, log_path: str) -> AgentResult:
    command = run.agent.command(request)
    parser = run.agent.parser(request)
    shown: str | None = None

    def on_stdout(data: bytes) -> None:
        nonlocal shown
        parser.feed(data)
        doing = parser.activity()
        if doing != shown:
            shown = doing
            run.emit(AgentActivity(doing or ""))

    outcome = run_agent_process(
        command,
        cwd=run.paths.project_root,
        log_path=log_path,
        limits=run.policy.limits,
        cancel=run.cancel,
        on_stdout=on_stdout,
        on_output=lambda stream, data: run.emit(AgentOutput(stream, data)),
    )
    return parser.finish(outcome)


def observe(run: Run, prepared: Prepared, result: AgentResult) -> Seen:
    """The task file re-read once (after the format put back what is its own), and the agent's signals:
    its final text, and what it recorded with `ralph signal`."""
    notes = [f"agent failed: {result.error}"] if result.error and not result.interrupted else []
    notes += run.source.after_agent()
    broken = None
    try:
        view = run.source.load()
    except RalphError as exc:  # recorded, then the decision table stops the loop
        view, broken = prepared.view, str(exc)
        notes.append(f"task file invalid after this iteration: {exc}")
    new = signal_log.read_new(run.paths.signals, prepared.signals_offset, prepared.number)
    analysis = with_records(analyze(result.final_text, prepared.prompt), new.records)
    interrupted = result.interrupted or run.cancel.is_set()
    clean = not result.failed and result.usage_limit is None and result.error_kind is None and not interrupted
    return Seen(view, broken, analysis, interrupted, clean, (*notes, *new.problems))


def says_done(task: Task, seen: Seen) -> bool:
    """The agent signalled DONE for exactly this task (seed 002; a bare legacy [DONE] counts when no
    <ralph> tag names a task), and not FAIL."""
    analysis = seen.analysis
    if not seen.clean or analysis.failed or analysis.legacy == "fail":
        return False
    if analysis.done_ids:
        return task.id in analysis.done_ids
    return analysis.legacy == "done"


def verify(run: Run, prepared: Prepared, seen: Seen) -> Checks:
    """post_iteration hooks, then the quality gates when the iteration claims something is done. After a
    failed agent run only the gates run, and only when every task looks done: a completion they confirm."""
    gates_set = bool(run.policy.gates)
    if not seen.clean or seen.broken is not None:
        if seen.broken is None and not seen.interrupted and seen.view.all_done and gates_set:
            return _gated(run, Checks(claimed=True), prepared.context)
        return Checks()
    runs = run.hooks.lifecycle("post_iteration", prepared.context)
    refused = [hook for hook in runs if hook.verify_failed]
    notes = [f"verification failed: {hook.summary()}; the iteration is not progress" for hook in refused]
    tails = ["\n".join(hook.tail.splitlines()[-10:]) for hook in refused]
    prompt_notes = [
        "the post_iteration check failed (verification failed)" + (f":\n{tail}" if tail else "") for tail in tails
    ]
    checks = Checks(
        claimed=_claims(prepared, seen),
        verify_failed=tuple(f"post_iteration hook {hook.name}" for hook in refused),
        notes=tuple(notes),
        prompt_notes=tuple(prompt_notes),
    )
    return _gated(run, checks, prepared.context) if checks.claimed and gates_set else checks


def _claims(prepared: Prepared, seen: Seen) -> bool:
    """Whether the iteration says something is done: a task newly done, DONE for its task, a completion
    claim, every task done, or steps reported complete in a JSON result."""
    a = seen.analysis
    result = a.json_result
    if result is not None and (result.completed_step_ids or result.status == "goal-complete"):
        return True
    newly = seen.view.done_ids - prepared.view.done_ids
    return bool(newly) or says_done(prepared.task, seen) or a.completion_claimed or seen.view.all_done


def _gated(run: Run, checks: Checks, context: HookContext) -> Checks:
    """The quality gates run; what fails goes to the iteration's log, progress.txt and the next prompt."""
    verdict = run.hooks.run_gates(context)
    root = run.paths.project_root
    report = verdict.report(root)
    if report:
        try:
            with open(context.transcript, "a", encoding="utf-8") as handle:
                handle.write("\n[ralph: " + "\n\n".join(report) + "]\n")
        except OSError:
            pass  # the same text is in progress.txt and the next prompt
    return replace(
        checks,
        gates=verdict,
        notes=(*checks.notes, *verdict.summaries(root)),
        prompt_notes=(*checks.prompt_notes, *report),
    )
