"""One `ralph run`: iterations (iteration.py) until the task source says done, a guard stops the loop,
or the user does. The engine never prints and never writes a record: it emits events (events.py).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Hashable
from dataclasses import dataclass

from ralphloop import git
from ralphloop.archive import archive_copy
from ralphloop.engine.decide import Action, Decision
from ralphloop.engine.iteration import Step, hook_record, iteration
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.engine.waits import Cleared, after_decision, circuit_advice, guards_before, reset_circuit
from ralphloop.errors import RalphError
from ralphloop.events import Archived, LoopEnded, Notice, RunStarted
from ralphloop.exitcodes import ExitReason
from ralphloop.hooks.run import CommandRun
from ralphloop.protocols import TaskView, iso
from ralphloop.textsafe import one_line

_GOING_ON = (Action.CONTINUE, Action.WAIT, Action.RETRY)
# The stops where the agent's own last words are what the user needs to act on.
_SAY_LAST_WORDS = (ExitReason.CIRCUIT_OPEN, ExitReason.BLOCKED, ExitReason.NEEDS_HUMAN, ExitReason.RETRIES_EXHAUSTED)


@dataclass(frozen=True, slots=True)
class LoopOutcome:
    reason: ExitReason
    message: str
    iterations: int  # counted ones
    duration_s: float
    archived_to: str | None = None
    guidance: str = ""


def run_loop(run: Run) -> LoopOutcome:
    """Iterate until complete, halted or interrupted; the records are final when this returns."""
    view = run.source.load()
    state = run.start
    os.makedirs(run.paths.logs, exist_ok=True)
    _started(run, view)
    if run.policy.reset_circuit:
        reset_circuit(run, run.policy.reset_circuit, state.number)
    else:
        run.breaker.save(run.breaker.load(), state.number)  # readable from the start
    step: Step | None = None
    start: git.WorkTree | None = None
    decision = Decision(Action.CONTINUE)
    try:
        run.hooks.lifecycle("pre_run", run.context(view.next_task.id if view.next_task else "", state.number))
        if view.all_done:
            decision = _already_done(run, state)
        elif run.policy.max_iterations == 0:
            decision = Decision(Action.HALT, ExitReason.MAX_ITERATIONS, "no iterations allowed")
        while decision.action in _GOING_ON:
            if run.cancel.is_set():
                decision = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
                break
            _hooks_ended(run, run.hooks.collect())
            cleared = guards_before(run, state)
            if not isinstance(cleared, Cleared):
                decision = cleared
                break
            if view.next_task is None:  # every task done, yet not complete: the gates failed
                decision = _already_done(run, state)
                break
            if start is None and run.workspace is not None:
                start = run.workspace.capture()
            step = iteration(run, state, cleared.breaker, view, start, cleared.slot, warned=bool(step and step.warned))
            state, view, start = step.state, step.view, step.next_start
            decision = after_decision(run, step.decision, step.limit)
            if decision.wait_s > 0:
                start = None  # the files may have changed while the loop waited
    except RalphError as exc:
        decision = Decision(Action.HALT, ExitReason.ERROR, str(exc))
    return _finish(run, decision, state, view, step)


def _started(run: Run, view: TaskView) -> None:
    try:
        breaker = run.breaker.load()
        circuit, why = breaker.state.value, breaker.reason
    except RalphError:
        circuit, why = "OPEN", "the breaker's state file is damaged"
    run.emit(
        RunStarted(
            run_id=run.id,
            feature=run.paths.name,
            feature_dir=run.paths.display(),
            source_kind=run.source.kind,
            agent=run.agent.name,
            max_iterations=run.policy.max_iterations,
            timeout_s=run.policy.limits.timeout_s,
            done=view.done_count,
            total=view.total,
            started_at=run.clock.now(),
            metrics_file=os.path.relpath(run.paths.metrics, os.getcwd()),
            scope=view.scope,
            max_retries=run.policy.max_retries,
            circuit_state=circuit,
            circuit_reason=why,
            rate_limit=run.policy.rate_limit_per_hour,
            number=run.start.number,
        )
    )


def _already_done(run: Run, state: LoopState) -> Decision:
    """Every task passes before any iteration: complete, once the quality gates agree."""
    verdict = run.hooks.run_gates(run.context("", state.number))
    if not verdict.failures:
        return Decision(Action.COMPLETE, ExitReason.COMPLETE, "every task already passes")
    for note in verdict.report(run.paths.project_root):
        run.emit(Notice("warning", note))
    return Decision(
        Action.HALT,
        ExitReason.ERROR,
        f"every task is done, but quality gates fail: {', '.join(verdict.failures)}; fix them, or reopen "
        "the task they concern, and run again",
    )


def _hooks_ended(run: Run, finished: list[tuple[Hashable, CommandRun]]) -> None:
    """Background per-iteration hooks that ended: the format records them."""
    for key, ran in finished:
        assert isinstance(key, tuple)
        hook_id, number = key
        hook_record(run, number, hook_id, ran)


def _finish(run: Run, decision: Decision, state: LoopState, view: TaskView, step: Step | None) -> LoopOutcome:
    """The background hooks waited for (or stopped), the final records, the archive, the end hooks."""
    assert decision.reason is not None
    _hooks_ended(run, run.hooks.stop(cancel=decision.reason is ExitReason.INTERRUPTED))
    advice = _advice(run, decision, state, step)
    duration = run.clock.monotonic() - run.started
    last_words = step.last_message if step is not None and decision.reason in _SAY_LAST_WORDS else ""
    run.emit(
        LoopEnded(
            run_id=run.id,
            reason=decision.reason,
            message=decision.message,
            tally=state.tally,
            duration_s=duration,
            done=view.done_count,
            total=view.total,
            ended_at=run.clock.now(),
            guidance=advice,
            scope=view.scope,
            last_message=last_words,
            max_iterations=run.policy.max_iterations,
            state=state.persisted(),
        )
    )
    archived = None
    ran = state.tally.counted + state.tally.uncounted > 0
    if decision.reason is ExitReason.COMPLETE and run.policy.archive and ran and run.paths.is_feature_folder:
        try:
            archived = archive_copy(run.paths, run.clock.now())
            run.emit(Archived(archived))
        except OSError as exc:  # the work is done and recorded; a failed copy must not hide that
            run.emit(Notice("warning", f"could not archive {run.paths.display()}: {exc}"))
    _end_hooks(run, decision, state)
    run.hooks.close()
    return LoopOutcome(decision.reason, decision.message, state.tally.counted, duration, archived, advice)


def _end_hooks(run: Run, decision: Decision, state: LoopState) -> None:
    """on_complete, on_error or on_halt, once the records are final; told why through the environment."""
    assert decision.reason is not None
    if decision.reason in (ExitReason.COMPLETE, ExitReason.STORY_DONE):
        event = "on_complete"
    elif decision.reason in (ExitReason.ERROR, ExitReason.AGENT_ERROR):
        event = "on_error"
    else:
        event = "on_halt"
    extra = {
        "RALPH_EXIT_REASON": decision.reason.value,
        "RALPH_EXIT_CODE": str(decision.reason.exit_code),
        "RALPH_EXIT_MESSAGE": one_line(decision.message, 1000),
    }
    run.hooks.lifecycle(event, run.context(state.task, state.number), extra)


def _advice(run: Run, decision: Decision, state: LoopState, step: Step | None) -> str:
    """What the user should do next, after a halt a guard caused: commands that work when pasted."""
    again = run.resume
    reason = decision.reason
    if reason is ExitReason.CIRCUIT_OPEN:
        return circuit_advice(run)
    if reason is ExitReason.RETRIES_EXHAUSTED:
        story = shlex.join(["ralph", "run", "-s", state.task]) + again.removeprefix("ralph run")
        return (
            f"Human intervention required: {state.task} failed {state.retries} times. Read the failed attempts "
            f"(logs/iteration-N.patch and `git log refs/ralph/attempts/`), fix the cause or the task, then run: "
            f"{story}"
        )
    if reason is ExitReason.USAGE_LIMIT:
        limit = step.limit if step is not None else None
        when = iso(limit.resets_at) if limit and limit.resets_at else "an unknown time"
        return f"The usage limit resets at {when}. Then run: {again}"
    if reason is ExitReason.BUDGET:
        return f"Raise the budget (--max-cost, --max-tokens, --max-runtime or budget: in config), then: {again}"
    if reason is ExitReason.MODEL_MISMATCH:
        return "Request another model (--model), or accept any model with --poorman"
    if reason is ExitReason.AGENT_ERROR:
        return f"Fix what the message says, then run: {again}"
    return ""
