""".circuit_breaker_state and .circuit_breaker_history: the breaker across runs, and every transition it made."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import STATE_CAP, maybe_not_text, read_file, scrub
from ralphloop.files.schemas import BREAKER
from ralphloop.files.store import atomic_write_json
from ralphloop.guards.breaker import HISTORY_KEEP, Breaker, Transition


def load_breaker(path: str, label: str, reset: str = "ralph reset-circuit") -> Breaker:
    """The saved breaker; CLOSED when there is none. A damaged file is an error naming it, left as it is."""
    raw = read_file(path, label, cap=STATE_CAP, follow=False)
    if raw is None:
        return Breaker()
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        data = scrub(data) if maybe_not_text(raw) else data  # written back as it is read: no NUL, no surrogate
        if data.get("schema_version", BREAKER.version) != BREAKER.version:
            raise ValueError(f"schema_version {data.get('schema_version')!r} is not {BREAKER.version}")
        return Breaker.from_json(data)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise RalphError(f"{label}: not a circuit breaker state ({exc}); {reset} writes a fresh one") from None


def save_breaker(path: str, breaker: Breaker, iteration: int) -> None:
    atomic_write_json(path, breaker.to_json(iteration), version=BREAKER.version, marked=True)


def read_history(path: str) -> list[dict[str, Any]]:
    """The saved transitions, oldest first; a missing or damaged history reads as empty (it is only a log)."""
    try:
        data = json.loads(read_file(path, cap=STATE_CAP, follow=False) or b"[]")
    except (RalphError, ValueError, RecursionError):  # refused: the run's preflight names it
        return []
    if isinstance(data, dict):
        data = data.get("transitions")
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def append_history(path: str, transitions: Iterable[Transition]) -> None:
    """Add transitions, keeping the newest HISTORY_KEEP (rewritten atomically: readable at any instant)."""
    new = [transition.to_json() for transition in transitions]
    if not new:
        return
    kept = (read_history(path) + new)[-HISTORY_KEEP:]
    atomic_write_json(path, {"transitions": kept}, marked=True)


class BreakerFile:
    """The breaker's state file and its history: the one truth about the circuit, read before each
    iteration (so `ralph reset-circuit` from another terminal takes effect) and written after it."""

    def __init__(self, path: str, history: str, label: str) -> None:
        self.path = path
        self.history = history
        self.label = label

    def load(self) -> Breaker:
        return load_breaker(self.path, self.label)

    def reset(self, why: str, now: datetime, iteration: int) -> Transition:
        """CLOSED with every count at zero (`ralph reset-circuit`, `run --reset-circuit`); a damaged file too."""
        try:
            breaker = self.load()
        except RalphError:  # a damaged file is what a reset is for
            breaker = Breaker()
        fresh, moved = breaker.reset(why, now, iteration)
        self.save(fresh, iteration, moved)
        return moved

    def save(self, breaker: Breaker, iteration: int, transition: Transition | None = None) -> None:
        save_breaker(self.path, breaker, iteration)
        if transition is not None:
            append_history(self.history, [transition])
