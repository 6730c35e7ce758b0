"""One iteration, top to bottom: prepare → agent → observe → verify → settle → judge → decide → apply →
verdict → close. Each phase is a function over frozen values; only `apply` and `close` change the files.
"""

from __future__ import annotations

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.analysis.reading import read_iteration, says_done
from ralphloop.analysis.text import last_paragraph
from ralphloop.core.errors import RalphError
from ralphloop.core.events import CircuitChanged, IterationClosed, Notice, Slot, Undoing
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, SettleFacts, Settlement, TaskView, iso
from ralphloop.engine.decide import Action, Decision, decide
from ralphloop.engine.judge import Facts, Judged, Verdict, judge, status_of, verdict
from ralphloop.engine.phases import Prepared, Seen, observe, prepare, run_agent, verify
from ralphloop.engine.record import Closing, record
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.guards.breaker import Breaker, CircuitState, guidance
from ralphloop.hooks.checks import Checks
from ralphloop.words.textsafe import clean_text
from ralphloop.workspace.captures import WorkTree


class Step(Struct, frozen=True):
    """Where one iteration left the loop."""

    state: LoopState
    decision: Decision
    view: TaskView
    next_start: WorkTree | None  # the next iteration's starting capture, when nothing else ran since
    last_message: str  # the agent's last paragraph (for a stop that needs the user)
    limit: UsageLimit | None  # the vendor's usage limit, when the agent hit one


def iteration(run: Run, state: LoopState, breaker: Breaker, view: TaskView, start: WorkTree | None, slot: Slot) -> Step:
    """Run one iteration of `view.next_task`, record it, and say what comes next."""
    prepared = prepare(run, state, view, start, slot)
    result, session = run_agent(run, prepared, state.session)
    seen = observe(run, prepared, result)
    checks = verify(run, prepared, seen)
    settled = run.source.settle(_settle_facts(run, prepared, seen, checks))
    end = run.workspace.capture_end() if run.workspace else None
    facts = _facts(run, prepared, result, seen, checks, settled, end)
    judged = judge(state, breaker, facts, run.policy)
    decision = decide(judged.observation)
    _breaker(run, prepared.number, judged)
    undo = status_of(judged, decision, facts) if judged.undo else ""  # what kind of attempt is undone
    view, applied = _apply(run, prepared, end, settled.view, undo)
    git_failed = run.workspace.failure if run.workspace else None  # at the capture, the comparison or the undo
    told = verdict(judged, decision, facts, run.policy, git_failed)
    committing = _committing(run, told, facts, git_failed)
    notes = (*seen.notes, *told.notes, *checks.notes, *settled.notes, *applied)
    notes += ("changes committed by ralph (git.auto_commit)",) if committing else ()
    carried = _carried(judged, told, checks, session)
    return close(run, Closing(prepared, facts, end, judged, told, carried, view, notes, committing))


def close(run: Run, closing: Closing) -> Step:
    """The closing phase: the record, accepted work committed (git.auto_commit), the iteration closed (its
    journal goes), the format's hooks; where the loop stands for the next iteration."""
    prepared, judged, end = closing.prepared, closing.judged, closing.end
    run.emit(record(run, closing))
    if judged.warning:
        run.emit(Notice("warning", judged.warning))
    # Since `end` only ralph's record touched the files (no background hook running): the commit reads just that.
    if closing.committing and run.workspace is not None:
        since = None if run.hooks.running else end
        for event in run.workspace.commit_task(prepared.start, prepared.task, run.source.kind, prepared.number, since):
            run.emit(event)
    run.emit(IterationClosed(prepared.number))
    if judged.counted and not closing.facts.interrupted:
        run.hooks.format_hooks(run.source, prepared.context, run.now)
    # The next start from `end` (or the commit's, or the undo's), ralph's records read again; after a hook, afresh.
    next_start: WorkTree | None = None
    if (workspace := run.workspace) is not None and not _hooks_ran(run):
        after = workspace.after_undo if judged.undo else workspace.after_commit if closing.committing else None
        next_start = after() if after is not None else workspace.after_records(end)
    message = clean_text(last_paragraph(closing.facts.result.final_text))  # redacted as it is read
    return Step(closing.state, closing.told.decision, closing.view, next_start, message, judged.limit)


def _hooks_ran(run: Run) -> bool:
    """Whether a hook (the format's, one still running) may have touched the files since the iteration's capture."""
    if run.hooks.running:
        return True
    try:
        return bool(run.source.iteration_hooks())
    except RalphError:  # a format that cannot list them now (its SPRINT.yaml half edited) counts as having them
        return True


def _settle_facts(run: Run, prepared: Prepared, seen: Seen, checks: Checks) -> SettleFacts:
    a = seen.analysis
    return SettleFacts(
        task=prepared.task,
        view=seen.view,
        number=prepared.number,
        now=iso(run.clock.now()),
        clean=seen.clean,
        says_done=says_done(prepared.task.id, seen.analysis, clean=seen.clean),
        claimed=checks.claimed,
        gate_failures=checks.failures,
        completion_claimed=a.completion_claimed,
        json_result=a.json_result,
        json_error=a.json_error,
        broken=seen.broken,
    )


def _facts(
    run: Run,
    prepared: Prepared,
    result: AgentResult,
    seen: Seen,
    checks: Checks,
    settled: Settlement,
    end: WorkTree | None,
) -> Facts:
    changed = run.workspace.changed(prepared.start, end) if run.workspace else ()
    return Facts(
        number=prepared.number,
        task=prepared.task,
        result=result,
        analysis=seen.analysis,
        reading=read_iteration(seen.analysis, prepared.task, settled.view, list(changed), view_valid=not seen.broken),
        before=prepared.view,
        settled=settled,
        broken=seen.broken,
        interrupted=seen.interrupted,
        changed=changed,
        gate_failures=checks.gates.failures,
        verify_failures=checks.verify_failed,
        marks_done=run.source.marks_done,
        left_git=seen.left_git,
        now=run.clock.now(),
        runtime_s=run.runtime(),
    )


def _carried(judged: Judged, told: Verdict, checks: Checks, session: str) -> LoopState:
    """The loop's state for the next iteration: the judged counters, the notes for the next prompt, the session."""
    tally = replace(judged.state.tally, successes=judged.state.tally.successes + told.success)
    notes, session = (*told.prompt_notes, *checks.prompt_notes), "" if judged.undo else session  # undone: forgotten
    return replace(judged.state, notes=notes, session=session, tally=tally)


def _breaker(run: Run, number: int, judged: Judged) -> None:
    """The breaker's new state to its file; a transition told (with what to do, when it opened)."""
    if not judged.counted:
        return
    run.breaker.save(judged.breaker, number, judged.transition)
    moved = judged.transition
    if moved is not None:
        advice = guidance(judged.breaker, run.paths.flag, run.resume) if moved.to_state is CircuitState.OPEN else ""
        run.emit(CircuitChanged(moved.from_state.value, moved.to_state.value, moved.reason, advice))


def _apply(
    run: Run, prepared: Prepared, end: WorkTree | None, view: TaskView, undo: str
) -> tuple[TaskView, tuple[str, ...]]:
    """A failed or rejected attempt, or a call that did not count (`undo`: its status word), is saved and undone,
    the task file read again; other work is kept as the agent left it."""
    if run.workspace is None:
        return view, ()
    if not undo:
        reopened = prepared.view.done_ids - view.done_ids
        return view, run.workspace.after_agent(prepared.start, end, prepared.number, reopened)
    run.emit(Undoing(prepared.number))
    fresh = not run.hooks.running  # nothing ran since `end` was captured: the undo starts from it
    notes = (run.workspace.undo(prepared.start, end, prepared.number, prepared.task.id, undo, fresh=fresh),)
    try:
        return run.source.load(), notes
    except RalphError as exc:
        return view, (*notes, f"task file invalid after the undo: {exc}")


def _committing(run: Run, told: Verdict, facts: Facts, git_failed: str | None) -> bool:
    """seed 004: commit an accepted iteration's work; never work that is rejected, undone or interrupted."""
    if not run.policy.auto_commit or not run.workspace or git_failed or not told.accepted:
        return False
    return told.decision.action is not Action.RETRY and run.workspace.work_changed(facts.changed)
