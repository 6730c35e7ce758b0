"""state.json: what a later run (or `ralph status`) needs to pick up where the last one stopped."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from msgspec import Struct, field, to_builtins

from ralphloop.core.protocols import iso
from ralphloop.files.read import read_json_object
from ralphloop.files.schemas import STATE
from ralphloop.files.store import atomic_write_json
from ralphloop.words.patterns import lazy

_LOG_NAME = lazy(r"^iteration-(\d+)\.log$")


class LastOutcome(Struct):
    iteration: int
    task_id: str
    status: str
    exit_code: int | None
    error: str | None
    at: str


class RunState(Struct):
    """The feature's loop state across runs. `iteration` counts every agent run ever made for it."""

    iteration: int = 0
    current_task: str = ""
    retry_count: int = 0
    completed_ids: list[str] = field(default_factory=list)
    last_outcome: LastOutcome | None = None
    # What the next prompt must tell the agent (a refused claim and what still fails, ...).
    next_prompt_notes: list[str] = field(default_factory=list)
    # Consecutive iterations (decide.Streaks): blocked, test_only, question_only.
    streaks: dict[str, int] = field(default_factory=dict)
    last_exit_reason: str = ""
    session_id: str = ""  # the agent's last session (Claude Code), resumed when claude.resume is on
    updated_at: str = ""

    @classmethod
    def load(cls, path: str, logs_dir: str) -> RunState:
        """The saved state; a missing or unreadable file starts afresh, numbered after existing logs."""
        data = read_json_object(path)
        # seed 002's own state.json has no schema_version: its fields are read all the same
        if data is None or data.get("schema_version", STATE.version) != STATE.version:
            return cls(iteration=highest_log_number(logs_dir))
        outcome = data.get("last_outcome")
        try:
            state = cls(
                iteration=int(data.get("iteration", 0)),
                current_task=str(data.get("current_story", data.get("current_task")) or ""),
                retry_count=int(data.get("retry_count", 0)),
                completed_ids=[str(item) for item in data.get("completed_stories", data.get("completed_ids", []))],
                last_outcome=LastOutcome(**outcome) if isinstance(outcome, dict) else None,
                next_prompt_notes=_strings(data.get("next_prompt_notes")),
                streaks=_counts(data.get("streaks")),
                last_exit_reason=str(data.get("last_exit_reason") or ""),
                session_id=str(data.get("session_id") or ""),
                updated_at=str(data.get("updated_at", "")),
            )
        except (TypeError, ValueError, OverflowError):
            return cls(iteration=highest_log_number(logs_dir))
        # Never reuse a log's number, even if state.json was restored from an older copy.
        state.iteration = max(state.iteration, highest_log_number(logs_dir))
        return state

    def save(self, path: str) -> None:
        atomic_write_json(path, self.to_json(), version=STATE.version, marked=True)

    def to_json(self) -> dict[str, Any]:
        """Seed 002's schema first ({completed_stories, current_story, retry_count}), then ralph's own fields."""
        body = to_builtins(self)  # last_outcome becomes a dict too; lists are copies
        seed = {
            "completed_stories": body.pop("completed_ids"),
            "current_story": body.pop("current_task") or None,
            "retry_count": body.pop("retry_count"),
        }
        return STATE.dump({**seed, **body})


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(key): int(count) for key, count in value.items() if isinstance(count, int) and count >= 0}


def highest_log_number(logs_dir: str) -> int:
    try:
        names = os.listdir(logs_dir)
    except OSError:
        return 0
    numbers = [int(match.group(1)) for name in names if (match := _LOG_NAME.match(name))]
    return max(numbers, default=0)


class StateFile:
    """Subscribes to the engine's events and keeps state.json: the iteration's number is reserved before
    its agent starts (a crash never reuses it), the rest follows each iteration and the run's end."""

    def __init__(self, path: str, state: RunState, now: Callable[[], datetime]) -> None:
        self.path = path
        self.state = state
        self.now = now

    def __call__(self, event: object) -> None:
        from ralphloop.core.events import IterationFinished, IterationStarted, LoopEnded

        state = self.state
        if isinstance(event, IterationStarted):
            self._carry(event.state)
        elif isinstance(event, IterationFinished):
            self._carry(event.state)
            kept = set(state.completed_ids) - set(event.open_ids)  # a narrowed run sees only part of the tasks
            state.completed_ids = sorted(kept | set(event.done_ids))
            error = event.result.error
            state.last_outcome = LastOutcome(
                event.number, event.task_id, event.status, event.result.exit_code, error, iso(event.finished_at)
            )
        elif isinstance(event, LoopEnded):
            self._carry(event.state)
            state.last_exit_reason = event.reason.value
        else:
            return
        if state.current_task in state.completed_ids:  # seed 002: DONE sets current_story to null
            state.current_task = ""
        state.updated_at = iso(self.now())
        state.save(self.path)

    def _carry(self, carried: Mapping[str, Any]) -> None:
        state = self.state
        state.iteration = int(carried.get("iteration", state.iteration))
        state.current_task = str(carried.get("current_story") or "")
        state.retry_count = int(carried.get("retry_count", 0))
        state.streaks = _counts(carried.get("streaks"))
        state.next_prompt_notes = _strings(carried.get("next_prompt_notes"))
        state.session_id = str(carried.get("session_id") or "")
