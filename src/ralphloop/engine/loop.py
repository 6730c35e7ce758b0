"""One `ralph run`: iterations (iteration.py) until the task source says done, a guard stops the loop,
or the user does. The engine never prints and never writes a record: it emits events (core/events.py).
"""

from __future__ import annotations

import os

from msgspec import Struct, structs

from ralphloop.core.errors import RalphError
from ralphloop.core.events import Archived, CircuitChanged, LoopEnded, Notice, RunStarted
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import TaskView
from ralphloop.engine.decide import Action, Decision, complete, stop_decision
from ralphloop.engine.iteration import Step, iteration
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.engine.waits import Cleared, after_decision, guards_before
from ralphloop.guards.advice import advice
from ralphloop.guards.breaker import Breaker
from ralphloop.hooks.checks import confirm_done
from ralphloop.plugins.formats import format_of
from ralphloop.project.archive import archive_feature
from ralphloop.workspace.captures import WorkTree

_GOING_ON = (Action.CONTINUE, Action.WAIT, Action.RETRY)
# The stops where the agent's own last words are what the user needs to act on.
_SAY_LAST_WORDS = (ExitReason.CIRCUIT_OPEN, ExitReason.BLOCKED, ExitReason.NEEDS_HUMAN, ExitReason.RETRIES_EXHAUSTED)


class LoopOutcome(Struct, frozen=True):
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
    moved = (
        run.breaker.reset(run.policy.reset_circuit, run.clock.now(), state.number) if run.policy.reset_circuit else None
    )
    _started(run, view, run.breaker.load())
    if moved is not None:
        run.emit(CircuitChanged(moved.from_state.value, moved.to_state.value, moved.reason))
    for event in run.recovered:  # a killed run's last iteration, settled before this run began (start/recover.py)
        run.emit(event)
    run.breaker.save(run.breaker.load(), state.number)  # readable from the start
    step: Step | None = None
    start: WorkTree | None = None
    decision = Decision(Action.CONTINUE)
    try:
        run.hooks.lifecycle("pre_run", run.context(view.next_task.id if view.next_task else "", state.number))
        if view.all_done:
            decision = _already_done(run, state, view)
        elif run.policy.loop.max_iterations == 0:
            decision = Decision(Action.HALT, ExitReason.MAX_ITERATIONS, "no iterations allowed")
        while decision.action in _GOING_ON:
            if run.cancel.is_set():
                decision = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
                break
            run.hooks.recorded(run.source, run.hooks.collect(), run.now)
            cleared = guards_before(run, state)
            if not isinstance(cleared, Cleared):
                decision = cleared
                break
            if view.next_task is None:  # every task done, yet not complete: the gates failed
                decision = _already_done(run, state, view)
                break
            if start is None and run.workspace is not None:
                start = run.workspace.capture()
            step = iteration(run, state, cleared.breaker, view, start, cleared.slot)
            state, view, start = step.state, step.view, step.next_start
            decision = after_decision(run, step.decision, step.limit)
            if decision.wait_s > 0:
                start = None  # the files may have changed while the loop waited
    except RalphError as exc:
        decision = Decision(Action.HALT, ExitReason.ERROR, str(exc))
    stop = run.control.stopped_early(decision.reason, run.emit, run.cancel) if run.control else None
    return _finish(run, stop_decision(stop) if stop else decision, state, view, step)


def _started(run: Run, view: TaskView, breaker: Breaker) -> None:
    run.emit(
        RunStarted(
            run_id=run.id,
            feature=run.paths.name,
            feature_dir=run.paths.display(),
            source_kind=run.source.kind,
            agent=run.agent.name,
            max_iterations=run.policy.loop.max_iterations,
            timeout_s=run.policy.limits.timeout_s,
            done=view.done_count,
            total=view.total,
            started_at=run.clock.now(),
            metrics_file=os.path.relpath(run.paths.metrics, os.getcwd()),
            scope=view.scope,
            max_retries=run.policy.loop.max_retries,
            circuit_state=breaker.state.value,
            circuit_reason=breaker.reason,
            rate_limit=run.policy.loop.rate_limit_per_hour,
            number=run.start.number,
        )
    )


def _already_done(run: Run, state: LoopState, view: TaskView) -> Decision:
    """Every task (in the run's scope) passes before any iteration: complete, once the quality gates agree."""
    failing = confirm_done(run.hooks, run.context("", state.number), run.paths.project_root)
    if run.cancel.is_set():  # a gate stopped by Ctrl+C did not fail
        return Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
    if not failing:
        return complete(view.scope, view.outside_open, "every task is already done")
    why = f"every task is done, but quality gates fail: {', '.join(failing)}; fix them, or reopen the task they concern"
    return Decision(Action.HALT, ExitReason.ERROR, why + ", and run again")


def _finish(run: Run, decision: Decision, state: LoopState, view: TaskView, step: Step | None) -> LoopOutcome:
    """The background hooks waited for (or stopped), the final records, the archive, the end hooks."""
    assert decision.reason is not None
    stopped = run.hooks.stop(cancel=decision.reason is ExitReason.INTERRUPTED or run.cancel.is_set())
    run.hooks.recorded(run.source, stopped, run.now)
    try:
        breaker = run.breaker.load() if decision.reason is ExitReason.CIRCUIT_OPEN else None
    except RalphError:  # the advice is a courtesy; the reason is already told
        breaker = None
    limit = decision.limit or (step.limit if step is not None else None)
    told = advice(
        decision.reason,
        again=run.resume,
        feature=run.paths.flag,
        task=state.task,
        retries=state.retries,
        breaker=breaker,
        resets_at=limit.resets_at if limit else None,
        narrowable=format_of(run.source.kind).narrowable,
    )
    duration = run.clock.monotonic() - run.started
    last_words = step.last_message if step is not None and decision.reason in _SAY_LAST_WORDS else ""
    ended = LoopEnded(
        run_id=run.id,
        reason=decision.reason,
        message=decision.message,
        tally=state.tally,
        duration_s=duration,
        done=view.done_count,
        total=view.total,
        ended_at=run.clock.now(),
        guidance=told,
        scope=view.scope,
        last_message=last_words,
        max_iterations=run.policy.loop.max_iterations,
        state=state.persisted(),
        resets_at=limit.resets_at if limit else None,
    )
    run.emit(ended)
    if run.hooks.end_of_run(decision.reason, decision.message, run.context(state.task, state.number)):
        why = f"the end hooks were stopped (the loop had ended: {decision.reason.value})"
        ended = structs.replace(ended, reason=ExitReason.INTERRUPTED, message=why)  # told again: ralph was stopped
        run.emit(ended)
    archived = None  # last: the end hooks (and their logs) still find the feature where it was
    ran = state.tally.counted + state.tally.uncounted > 0
    if ended.reason is ExitReason.COMPLETE and run.policy.archive and ran and run.paths.is_feature_folder:
        try:
            archived = archive_feature(run.paths, run.clock.now())
            run.emit(Archived(archived))
        except OSError as exc:  # the work is done and recorded; a failed move must not hide that
            run.emit(Notice("warning", f"could not archive {run.paths.display()}: {exc}"))
    run.hooks.close()
    return LoopOutcome(ended.reason, ended.message, state.tally.counted, duration, archived, told)
