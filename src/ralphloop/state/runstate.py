"""state.json: what a later run (or `ralph status`) needs to pick up where the last one stopped."""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ralphloop.state.read import read_json_object
from ralphloop.state.store import SCHEMA_VERSION, atomic_write_json

_LOG_NAME = re.compile(r"^iteration-(\d+)\.log$")


@dataclass(slots=True)
class LastOutcome:
    iteration: int
    task_id: str
    status: str
    exit_code: int | None
    error: str | None
    at: str


@dataclass(slots=True)
class RunState:
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
        if data is None or data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
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
        atomic_write_json(path, self.to_json())

    def to_json(self) -> dict[str, Any]:
        """Seed 002's schema first ({completed_stories, current_story, retry_count}), then ralph's own fields."""
        body = asdict(self)
        seed = {
            "completed_stories": body.pop("completed_ids"),
            "current_story": body.pop("current_task") or None,
            "retry_count": body.pop("retry_count"),
        }
        return {**seed, **body}


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
