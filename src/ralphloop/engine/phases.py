"""The phases of an iteration that touch the world: prepare the prompt, run the agent, observe what it did,
verify it with the hooks and quality gates. Each returns a frozen value; iteration.py strings them together.
"""

from __future__ import annotations

from msgspec import Struct
from msgspec.structs import asdict, replace

from ralphloop.analysis.reading import says_done
from ralphloop.analysis.signals import Analysis, analyze, with_records
from ralphloop.core.errors import RalphError
from ralphloop.core.events import AgentActivity, AgentOutput, AgentStarted, IterationStarted, Notice, Slot
from ralphloop.core.protocols import AgentRequest, AgentResult, ErrorKind, Task, TaskView, iso
from ralphloop.core.runner import Launch
from ralphloop.core.steering import Said
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.hooks.checks import Checks, check_iteration
from ralphloop.hooks.runner import HookContext
from ralphloop.processes.reaper import iteration_tag, left_running_note
from ralphloop.processes.sandbox import blocked_notes
from ralphloop.records import signal_log
from ralphloop.templates.prompt import iteration_prompt, iteration_request
from ralphloop.workspace.captures import WorkTree


class Prepared(Struct, frozen=True):
    """An iteration about to start its agent."""

    number: int
    task: Task
    view: TaskView  # the task state at its start
    start: WorkTree | None
    prompt: str
    request: AgentRequest
    log_path: str
    context: HookContext
    signals_offset: int
    began: float  # monotonic
    attempt: int  # 1 for the task's first attempt, 2 after one failed ...


class Seen(Struct, frozen=True):
    """What the agent left: the task file re-read once, its signals and their analysis."""

    view: TaskView
    broken: str | None  # the task file was invalid after the agent (then `view` is the one before)
    analysis: Analysis
    interrupted: bool
    clean: bool  # the agent ran to its end, on the run's branch: its reply is worth reading for results
    notes: tuple[str, ...]
    left_git: str | None  # it left the run's branch or history, or a merge waiting (Workspace.left_the_run)


def prompt_for(run: Run, state: LoopState, number: int, task: Task, said: Said = ()) -> tuple[str, AgentRequest]:
    """The prompt of iteration `number` and the request the agent gets (also what --dry-run shows)."""
    prompt = iteration_prompt(run.paths, run.source, task, number, state.notes, run.policy, said)
    request = iteration_request(run.paths, prompt, number, task, run.clock.now(), run.policy, state.session)
    return prompt, replace(request, home=run.runner.home)


def prepare(run: Run, state: LoopState, view: TaskView, start: WorkTree | None, slot: Slot) -> Prepared:
    """Everything before the agent starts: its prompt written, the number reserved (state.json, by the
    records), the format's stats, the pre_iteration hooks."""
    began = run.clock.monotonic()
    task = view.next_task
    assert task is not None
    number = state.number + 1
    said = run.control.unused() if run.control else ()  # the user's answers and `ralph say`, in one prompt
    prompt, request = prompt_for(run, state, number, task, said)
    with open(request.prompt_file, "w", encoding="utf-8") as handle:
        handle.write(prompt)
    log_path = run.paths.iteration_log(number)
    run.source.begin(number, run.policy.loop.max_iterations, iso(run.clock.now()))
    attempt = state.attempt_at(task.id) + 1
    reserved = replace(state, number=number, task=task.id, retries=attempt - 1).persisted()
    run.emit(
        IterationStarted(
            run_id=run.id,
            number=number,
            tally=state.tally,
            max_iterations=run.policy.loop.max_iterations,
            task_id=task.id,
            task_title=task.title,
            log_path=log_path,
            attempt=attempt,
            max_retries=run.policy.loop.max_retries,
            slot=slot,
            started_at=run.clock.now(),
            prompt_path=request.prompt_file,
            state=reserved,
            start=asdict(start) if start else None,
            done_ids=tuple(sorted(view.done_ids)),
            tag=iteration_tag(run.id, number),
        )
    )
    if run.control is not None:
        run.control.used(said, run.emit)
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

    launch = Launch(
        command, run.paths.project_root, log_path, run.policy.limits, iteration_tag(run.id, request.iteration)
    )
    outcome = run.runner.run(
        launch,
        run.cancel,
        on_stdout=on_stdout,
        on_output=lambda stream, data: run.emit(AgentOutput(stream, data)),
        on_start=lambda pid: run.emit(AgentStarted(request.iteration, pid, run.agent.name)),
    )
    return replace(parser.finish(outcome), left_running=outcome.left_running, blocked=outcome.blocked)


def observe(run: Run, prepared: Prepared, result: AgentResult) -> Seen:
    """The task file re-read once (after the format put back what is its own), and the agent's signals:
    its final text, and what it recorded with `ralph signal`."""
    notes = [f"agent failed: {result.error}"] if result.error and not result.interrupted else []
    notes += left_running_note(result.left_running) + blocked_notes(result.blocked)
    notes += run.source.after_agent()
    broken = None
    try:
        view = run.source.load()
    except RalphError as exc:  # recorded, then the decision table stops the loop
        view, broken = prepared.view, str(exc)
        notes.append(f"task file invalid after this iteration: {exc}")
    new = signal_log.read_new(run.paths.signals, prepared.signals_offset, prepared.number)
    loop = run.policy.loop
    reply = analyze(result.final_text, prepared.prompt, loop.promise, trust=loop.completion == "trust")
    analysis = with_records(reply, new.records)
    interrupted = result.interrupted or run.cancel.is_set()
    left = run.workspace.left_the_run(prepared.start, run.workspace.position()) if run.workspace else None
    clean = not result.failed and result.usage_limit is None and result.error_kind is None and not interrupted
    return Seen(view, broken, analysis, interrupted, clean and left is None, (*notes, *new.problems), left)


def verify(run: Run, prepared: Prepared, seen: Seen) -> Checks:
    """post_iteration hooks and quality gates (hooks/checks.py) over what the agent left."""
    ran_clean = seen.clean and seen.broken is None
    all_done = seen.broken is None and not seen.interrupted and seen.view.all_done
    claimed = ran_clean and _claims(prepared, seen)
    root = run.paths.project_root
    return check_iteration(
        run.hooks, prepared.context, ran_clean=ran_clean, claimed=claimed, all_done=all_done, root=root
    )


def _claims(prepared: Prepared, seen: Seen) -> bool:
    """Whether the iteration says something is done: a task newly done, DONE for its task, a completion
    claim, every task done, or steps reported complete in a JSON result."""
    a = seen.analysis
    result = a.json_result
    if result is not None and (result.completed_step_ids or result.status == "goal-complete"):
        return True
    newly = seen.view.done_ids - prepared.view.done_ids
    return (
        bool(newly)
        or says_done(prepared.task.id, seen.analysis, clean=seen.clean)
        or a.completion_claimed
        or seen.view.all_done
    )
