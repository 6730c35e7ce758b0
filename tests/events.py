"""Engine events with every field but the ones a test cares about filled in (tests of the sinks and views)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ralphloop.core.events import IterationFinished, IterationStarted, LoopEnded, RunStarted, Slot, Tally
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import AgentResult

WHEN = datetime(2026, 11, 21, 2, 0, 0, tzinfo=UTC)


def run_started(**fields: Any) -> RunStarted:
    values: dict[str, Any] = {
        "run_id": "1@x",
        "feature": "feat",
        "feature_dir": "/p/.ralph/feat",
        "source_kind": "prd",
        "agent": "claude",
        "max_iterations": 20,
        "timeout_s": 900,
        "done": 1,
        "total": 3,
        "started_at": WHEN,
    }
    return RunStarted(**{**values, **fields})


def iteration_started(**fields: Any) -> IterationStarted:
    values: dict[str, Any] = {
        "run_id": "1@x",
        "number": 1,
        "tally": Tally(),
        "max_iterations": 20,
        "task_id": "S-1",
        "task_title": "Story 1",
        "log_path": "logs/iteration-1.log",
        "attempt": 1,
        "max_retries": 3,
        "slot": Slot(1, 100),
        "started_at": WHEN,
    }
    return IterationStarted(**{**values, **fields})


def result(**fields: Any) -> AgentResult:
    values: dict[str, Any] = {"final_text": "", "exit_code": 0, "duration_s": 3.0, "failed": False}
    return AgentResult(**{**values, **fields})


def iteration_finished(**fields: Any) -> IterationFinished:
    values: dict[str, Any] = {
        "run_id": "1@x",
        "number": 1,
        "counted": True,
        "task_id": "S-1",
        "task_title": "Story 1",
        "status": "in-progress",
        "success": False,
        "result": result(),
        "files_changed": (),
        "commit": None,
        "done": 0,
        "total": 1,
        "notes": (),
        "wall_s": 3.1,
        "tally": Tally(counted=1),
        "finished_at": WHEN,
    }
    return IterationFinished(**{**values, **fields})


def loop_ended(reason: ExitReason = ExitReason.COMPLETE, **fields: Any) -> LoopEnded:
    values: dict[str, Any] = {
        "run_id": "1@x",
        "reason": reason,
        "message": "every task is done",
        "tally": Tally(counted=3),
        "duration_s": 60.0,
        "done": 3,
        "total": 3,
        "ended_at": WHEN,
    }
    return LoopEnded(**{**values, **fields})
