"""What the workflow keeps of each story's loop, and how its `fleet` query shapes it as fleet.json's loop entries
(state/fleet.py): plain values, no temporalio, so the query's shape is tested as any other."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ralphloop.temporal.shapes import FeatureSpec, Steer, StoryRow


@dataclass
class Loop:
    """A story's loop as the workflow tracks it (fleet.json's loop entry)."""

    story: str
    title: str = ""
    state: str = "waiting"
    slot: int | None = None
    attempt: int = 1
    worker: str | None = None
    note: str | None = None
    commit: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    cost_usd: float = 0.0
    resume: bool = False  # its next loop goes on from its pushed branch (it stopped, not failed or retried)


@dataclass
class Held:
    message: str
    until: datetime | None = None

    def view(self) -> dict[str, Any]:
        """fleet.json's `held`: {message, until}."""
        return {"message": self.message, "until": iso(self.until) if self.until else None}


def by_you(asked: Steer) -> str:
    """ "paused by you at 05:10 UTC (cli)": the whole run's pause or stop, as fleet.json's `steered` words it."""
    word = {"pause": "paused", "stop": "stopped"}.get(asked.action, asked.action)
    at = f" at {asked.at[11:16]} UTC" if len(asked.at) >= 16 else ""
    return f"{word} by you{at} ({asked.source})"


def fleet_view(
    spec: FeatureSpec,
    wid: str,
    now: datetime,
    ended: dict[str, Any],
    started_at: datetime | None,
    loops: list[Loop],
    queue: list[str],
    stories: list[StoryRow],
    *,
    held: Held | None,
    asked: Steer | None,
    spent: tuple[float, int],
) -> dict[str, Any]:
    """The run as fleet.json shapes it (state/fleet.py), which `ralph status`, the monitor and the page word."""
    return {
        "schema_version": 1,
        "fleetId": wid,
        "feature": spec.feature,
        "parallel": spec.parallel,
        **ended,
        "startedAt": iso(started_at) if started_at else None,
        "updatedAt": iso(now),
        "target": spec.branch,
        "loops": [entry(loop, spec.max_attempts) for loop in loops],
        "queue": list(queue),
        "storiesTotal": len(stories),
        "storiesMerged": sum(1 for row in stories if row.done),
        "held": held.view() if held else None,
        "steered": by_you(asked) if asked else None,
        "costUsd": round(spent[0], 6) if spent[0] else None,  # None: no agent reported one
        "tokensUsed": spent[1],
        "engine": "temporal",
    }


def entry(loop: Loop, max_attempts: int) -> dict[str, Any]:
    return {
        "story": loop.story,
        "title": loop.title,
        "state": loop.state,
        "slot": loop.slot,
        "attempt": loop.attempt,
        "maxAttempts": max_attempts,
        "worker": loop.worker,
        "note": loop.note,
        "commit": loop.commit,
        "startedAt": loop.started_at,
        "endedAt": loop.ended_at,
        "costUsd": loop.cost_usd,
    }


def cause_of(error: BaseException) -> str:
    """The innermost failure's message (an activity's error wraps the worker's)."""
    while error.__cause__ is not None:
        error = error.__cause__
    return str(error)


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parsed(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
