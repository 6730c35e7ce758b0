"""The next run's half of the journal (records/journal.py): an iteration that a kill cut short is finished
before anything else happens, so that nothing is lost, nothing is done twice and nothing is left running.

1. What its agent left running (found by its tag, wherever it was re-parented) is stopped first: a second
   agent must never work on the same story in the same files.
2. Its work: an undo that was under way is finished (the attempt it saved is kept). An iteration whose verdict
   was already final has its records completed and its commit made. One cut short before its verdict is
   judged by its task: marked done (and passing the quality gates, when there are any), its work is kept and,
   with git.auto_commit, committed; otherwise the attempt is saved (a ref and a patch) and undone.
3. Its records: written now, as an iteration that was interrupted (it never counts), or replayed from the
   journal where a record file does not have it yet. The journal goes once they are all written.
4. The temporary files of atomic writes a kill cut short, whose writers are gone, are removed (state/leftovers.py).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec
from msgspec.structs import replace

from ralphloop.analysis.reading import Streaks
from ralphloop.core.errors import RalphError
from ralphloop.core.events import Committed, IterationClosed, IterationFinished, Notice, Tally
from ralphloop.core.protocols import AgentResult, Task, TaskView
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.processes import reaper
from ralphloop.records import journal as journal_file
from ralphloop.records.journal import NO_RECORD, Journal
from ralphloop.state.leftovers import remove_stale_temps
from ralphloop.words.patterns import lazy
from ralphloop.workspace.captures import WorkTree

KILLED = "ralph was killed during this iteration"


def reconcile(run: Run) -> Run:
    """`run` with what a killed run left behind settled: its start state and the events still to record
    (emitted once the run has started, then the journal goes). The next iteration's number is past every
    one a killed run began, recorded or not: a kill between the journal and state.json's reservation of the
    number (a second Ctrl+C, SIGKILL) must not give two iterations one number, one log, two records."""
    begun = _last_begun(run)  # before the journal is settled: it may be set aside
    settled = _settle(run)
    paths = run.paths  # once what the killed run left running is stopped: none of its writers is still at work
    # ralph's own folders whole; the workspace's folder (the project's root for seeds 000-002, where ralph rewrites
    # PROGRESS.yaml and progress.txt) only for names with ralph's mark: a `.tmp-xxxxxxxx` there may be the user's
    now = time.time()
    remove_stale_temps((paths.state_dir, paths.logs), now)
    remove_stale_temps((paths.dir,), now, marked_only=True)
    last = max(settled.start.number, begun)
    return settled if last == settled.start.number else replace(settled, start=replace(settled.start, number=last))


def _last_begun(run: Run) -> int:
    """The highest iteration number a journal or a log names (0 when none)."""
    numbers = [0]
    with contextlib.suppress(OSError, ValueError, RalphError):  # _settle says what is wrong with it
        journal = journal_file.read(run.paths.journal)
        numbers.append(journal.number if journal is not None else 0)
    with contextlib.suppress(OSError):
        for name in os.listdir(run.paths.logs):
            match = _LOG.fullmatch(name)
            if match:
                numbers.append(int(match.group(1)))
    return max(numbers)


_LOG = lazy(r"iteration-(\d{1,9})\.log")


def _settle(run: Run) -> Run:
    path = run.paths.journal
    try:
        journal = journal_file.read(path)
    except ValueError as exc:
        try:
            where = journal_file.set_aside(path, run.paths.logs)
        except OSError as move:
            raise RalphError(f"{exc}; it cannot be moved aside either ({move.strerror or move})") from None
        told = f"{exc}: moved to {where}; an iteration a killed run left may be unrecorded"
        return replace(run, recovered=(Notice("warning", told),))
    if journal is None:
        return run
    stopped = _stop_leftovers(journal, run.policy.limits.kill_grace_s)
    if journal.phase == "recording" and bytes(journal.record) != bytes(NO_RECORD):
        return _replay(run, journal, stopped)
    return _interrupted(run, journal, stopped)


def _stop_leftovers(journal: Journal, grace_s: float) -> int:
    """Stop the agent of the journal's iteration and all it started; how many processes were running."""
    targets = reaper.tagged_anywhere(journal.tag) if journal.tag else []
    # The PID alone may name another process by now: only its start time says it is still the agent.
    agent = journal.pid > 0 and journal.pid_start is not None and reaper.start_time(journal.pid) == journal.pid_start
    if agent and journal.pid not in targets:
        targets.append(journal.pid)
    return len(reaper.stop(targets, [journal.pid] if agent else [], grace_s))


def _replay(run: Run, journal: Journal, stopped: int) -> Run:
    """The verdict was final: the record files that lack it get it, and the commit it called for is made."""
    try:
        record = msgspec.json.decode(journal.record, type=IterationFinished)
    except msgspec.MsgspecError:
        return _interrupted(run, journal, stopped)
    events: list[object] = [Notice("warning", f"iteration {journal.number}: {KILLED} while recording it; completed")]
    events.append(replace(record, recovered=True))
    start = _start(journal)
    if record.committing and journal.committed is None and run.workspace is not None:
        task = Task(id=record.task_id, title=record.task_title, done=True)
        events += run.workspace.commit_task(start, task, run.source.kind, journal.number)
    events.append(IterationClosed(journal.number))  # the journal goes once the record files have it all
    return replace(run, start=_state_of(record.state, run.start), recovered=tuple(events))


def _interrupted(run: Run, journal: Journal, stopped: int) -> Run:
    """No verdict yet: the task's state decides what becomes of the work; recorded as interrupted."""
    start = _start(journal)
    end = run.workspace.capture() if run.workspace is not None else None
    changed = run.workspace.changed(start, end) if run.workspace is not None else ()
    view, broken = _view(run)
    newly_done = view is not None and journal.task_id in view.done_ids - set(journal.done_at_start)
    left = run.workspace.left_the_run(start, end) if run.workspace is not None else None  # not the run's work
    notes = [f"{KILLED}; the next run recovered it"]
    notes += reaper.left_running_note(stopped)
    events: list[object] = []
    if run.workspace is None:
        notes.append("outside git: its changes stay in place")
    elif journal.phase == "undoing":
        notes.append(_undo(run, journal, start, end, finishing=True))
    elif newly_done and broken is None and left is None and not (failing := _failing_gates(run, journal)):
        notes.append(f"{journal.task_id} was marked done: its work is kept")
        if run.policy.auto_commit and run.workspace.work_changed(changed):
            task = Task(id=journal.task_id, title=journal.task_title, done=True)
            events += run.workspace.commit_task(start, task, run.source.kind, journal.number)
            notes += ["changes committed by ralph (git.auto_commit)"] * any(isinstance(e, Committed) for e in events)
    else:
        why = broken or left or (f"quality gates fail: {', '.join(failing)}" if newly_done else "its task is not done")
        notes.append(f"{why}; " + _undo(run, journal, start, end, finishing=False))
    if run.workspace is not None and run.workspace.failure:  # the next run finishes it, once the user has looked
        raise RalphError(f"iteration {journal.number}: {KILLED}, and it cannot be settled: {run.workspace.failure}")
    view = _view(run)[0] or view
    record = _record(run, journal, view, tuple(changed), tuple(notes), end)
    told = f"iteration {journal.number}: {KILLED}; recovered ({notes[-1]})"
    return replace(run, recovered=(Notice("warning", told), record, *events, IterationClosed(journal.number)))


def _undo(run: Run, journal: Journal, start: WorkTree | None, end: WorkTree | None, *, finishing: bool) -> str:
    assert run.workspace is not None
    return run.workspace.undo(start, end, journal.number, journal.task_id, "interrupted", finishing=finishing)


def _failing_gates(run: Run, journal: Journal) -> tuple[str, ...]:
    """The quality gates that fail over the work (none configured: none fail)."""
    if not run.policy.gates:
        return ()
    return run.hooks.run_gates(run.context(journal.task_id, journal.number)).failures


def _view(run: Run) -> tuple[TaskView | None, str | None]:
    try:
        return run.source.load(), None
    except RalphError as exc:
        return None, f"the task file is invalid ({exc})"


def _start(journal: Journal) -> WorkTree | None:
    if journal.start is None or not journal.start.get("tree"):
        return None
    fields = journal.start
    return WorkTree(
        head=fields.get("head"),
        tree=fields["tree"] or "",
        index_tree=fields.get("index_tree"),
        branch=fields.get("branch"),
    )


def _record(
    run: Run,
    journal: Journal,
    view: TaskView | None,
    changed: tuple[str, ...],
    notes: tuple[str, ...],
    end: WorkTree | None,
) -> IterationFinished:
    """The interrupted iteration's record: never counted; its time is the agent's log's last write."""
    now = run.clock.now()
    ran = _ran_for(journal)
    start_head = (journal.start or {}).get("head")
    return IterationFinished(
        run_id=journal.run_id,
        number=journal.number,
        counted=False,
        task_id=journal.task_id,
        task_title=journal.task_title,
        status="interrupted",
        success=False,
        result=AgentResult(final_text="", exit_code=None, duration_s=ran, failed=True, interrupted=True, error=KILLED),
        files_changed=changed,
        commit=end.head[:12] if end and end.head and end.head != start_head else None,
        done=view.done_count if view else 0,
        total=view.total if view else 0,
        notes=notes,
        wall_s=ran,
        tally=Tally(),
        finished_at=now,
        source_kind=run.source.kind,
        agent=journal.agent or run.agent.name,
        attempt=journal.attempt,
        max_retries=run.policy.loop.max_retries,
        state=journal.state,
        done_ids=tuple(sorted(view.done_ids)) if view else (),
        open_ids=view.open_ids if view else (),
        recovered=True,
    )


def _ran_for(journal: Journal) -> float:
    """From the iteration's start to its log's last write: how long it is known to have run."""
    try:
        began = datetime.fromisoformat(journal.started_at.replace("Z", "+00:00")).timestamp()
        return max(0.0, os.stat(journal.log_path).st_mtime - began)
    except (OSError, ValueError):
        return 0.0


def _state_of(persisted: Mapping[str, Any], before: LoopState) -> LoopState:
    """The loop's carried state as a replayed record left it (state.json's fields)."""
    streaks = persisted.get("streaks")
    notes = persisted.get("next_prompt_notes")
    return replace(
        before,
        number=max(before.number, _int(persisted.get("iteration"))),
        task=str(persisted.get("current_story") or ""),
        retries=_int(persisted.get("retry_count")),
        streaks=Streaks.from_counts(streaks) if isinstance(streaks, Mapping) else before.streaks,
        notes=tuple(str(note) for note in notes) if isinstance(notes, list) else before.notes,
        session=str(persisted.get("session_id") or ""),
    )


def _int(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0
