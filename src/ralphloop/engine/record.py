"""An iteration as one record: the IterationFinished event every record file and view is written from."""

from __future__ import annotations

from msgspec import Struct

from ralphloop.analysis.reading import evidence
from ralphloop.core.events import IterationFinished
from ralphloop.core.protocols import TaskView, iso
from ralphloop.engine.judge import Facts, Judged, Verdict
from ralphloop.engine.phases import Prepared
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.workspace.captures import WorkTree, head_moved


class Closing(Struct, frozen=True):
    """An iteration through its verdict: what its record, its commit and the loop's next step are made of."""

    prepared: Prepared
    facts: Facts
    end: WorkTree | None  # the files as the agent left them (None: no git, or git could not capture them)
    judged: Judged
    told: Verdict
    state: LoopState  # the loop's state for the next iteration
    view: TaskView  # the task state after it (read again after an undo)
    notes: tuple[str, ...]
    committing: bool  # its work is committed next (git.auto_commit)


def record(run: Run, closing: Closing) -> IterationFinished:
    """The whole iteration: what the agent did, what ralph made of it, and where the loop stands after it."""
    prepared, facts, state, view = closing.prepared, closing.facts, closing.state, closing.view
    a, reading, result, limit = facts.analysis, facts.reading, facts.result, closing.judged.limit
    told = closing.told
    decision = told.decision
    return IterationFinished(
        run_id=run.id,
        number=prepared.number,
        counted=closing.judged.counted,
        task_id=prepared.task.id,
        task_title=prepared.task.title,
        status=told.status,
        success=told.success,
        result=result,
        files_changed=facts.changed,
        commit=head_moved(prepared.start, closing.end),  # the agent's own commits
        done=view.done_count,
        total=view.total,
        notes=closing.notes,
        wall_s=run.clock.monotonic() - prepared.began,
        tally=state.tally,
        finished_at=run.clock.now(),
        signals=a.signals,
        info=facts.settled.info,
        failure=closing.judged.task_failed,
        source_kind=run.source.kind,
        learnings=a.learnings,
        agent=run.agent.name,
        committing=closing.committing,
        analysis=a.to_json(),
        evidence=evidence(a, reading, state.streaks),
        decision=decision.action.value,
        exit_reason=decision.reason.value if decision.reason else None,
        refused_claim=decision.refused_claim,
        attempt=prepared.attempt,
        max_retries=run.policy.loop.max_retries,
        next_prompt_notes=state.notes,
        state=state.persisted(),
        usage_limit=limit.record(run.policy.usage.action, iso(run.clock.now())) if limit else None,
        done_ids=tuple(sorted(view.done_ids)),
        open_ids=view.open_ids,
    )
