"""`ralph run --start-at HH:MM|reset`: when the first iteration may start (issue 34), kept in the feature's
`.start_at.json` once decided, so that a ralph killed while it waits and started again with the same flag waits for
the same instant, not the next day's. The wait itself is the loop's (engine/waits.py), counted down like any other.

`HH:MM` is the next such time of day, in the machine's zone. `reset` is when the account's window resets: the window
past the user's cap (`--max-window`) when one is, else the first capped window to reset, else (no caps) the first
window to reset, as the book of windows knows them (agents/agent_limits.py); none known: start now, and say so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta

from ralphloop.core.errors import RalphError
from ralphloop.files.json_text import loads
from ralphloop.files.safe_read import read_file
from ralphloop.files.store import atomic_write_json
from ralphloop.words.patterns import lazy

RESET = "reset"
_CLOCK = lazy(r"([01]?[0-9]|2[0-3]):([0-5][0-9])")
_SERVED_FOR = timedelta(hours=12)  # an instant this recently past was waited for: started again, start at once
_MAX_AHEAD = timedelta(days=40)  # a reset further ahead than any vendor's window is a damaged book, not a plan

NextReset = Callable[[datetime], datetime | None]  # the account's next reset as the book knows it, at a time


def check_start(spec: str) -> str:
    """The flag's value, or a one-line error naming it."""
    given = spec.strip().lower()
    if given != RESET and not _CLOCK.fullmatch(given):
        raise RalphError(f"--start-at {spec[:40]!r}: expected reset or a time of day HH:MM (24-hour), such as 02:00")
    return given


class StartAt:
    """The instant the run starts at, decided once (the first time it is asked) and kept in `path`."""

    def __init__(self, spec: str, path: str, next_reset: NextReset, tell: Callable[[str], None]) -> None:
        self.spec = check_start(spec)
        self.path = path
        self._next_reset = next_reset
        self._tell = tell  # the run's notices: why `reset` starts now
        self._decided = False
        self._at: datetime | None = None

    def due(self, now: datetime) -> datetime | None:
        """The instant to wait for, the first time it is asked and while it is ahead; None: start now."""
        if not self._decided:
            self._decided = True
            self._at = self._decide(now)
        return self._at if self._at is not None and self._at > now else None

    def _decide(self, now: datetime) -> datetime | None:
        kept = self._kept()
        if kept is not None and (kept > now or now - kept < _SERVED_FOR):
            return kept  # the same flag again: the instant decided before (waited for, or being waited for)
        if self.spec == RESET:
            at = self._next_reset(now)
            if at is None or not now < at < now + _MAX_AHEAD:
                self._tell("--start-at reset: no reset of the agent account's usage windows is known yet; starting now")
                return None
        else:
            hour, minute = (int(part) for part in self.spec.split(":"))
            local = now.astimezone()
            at = datetime.combine(local.date(), time(hour, minute), local.tzinfo)
            at = at if at > local else at + timedelta(days=1)
        try:
            atomic_write_json(self.path, {"spec": self.spec, "at": at.isoformat()})
        except OSError as exc:
            raise RalphError(f"{self.path}: cannot keep the --start-at instant ({exc.strerror or exc})") from None
        return at

    def _kept(self) -> datetime | None:
        """The instant kept for this same flag; None for another flag, none kept, or a damaged file (decided anew)."""
        try:
            data = read_file(self.path, cap=4096, follow=False)
            body = loads(data) if data is not None else None
            if not isinstance(body, dict) or body.get("spec") != self.spec or not isinstance(body.get("at"), str):
                return None
            at = datetime.fromisoformat(body["at"])
            return at if at.tzinfo is not None else None
        except (OSError, ValueError, RalphError):
            return None
