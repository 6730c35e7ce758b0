"""`ralph run --start-at HH:MM|reset`: when the first iteration may start (issue 34), kept in the feature's
`.start_at.json` once decided, so that a ralph killed while it waits (or mid-run, soon after) and started again with
the same flag waits for the same instant, not the next day's. A run that ends (any way but an interrupt) clears it:
the same flag given the next evening means that evening. The wait itself is the loop's (engine/waits.py) or the
parallel coordinator's, and the runtime budget does not count it.

`HH:MM` is the next such time of day, in the machine's zone (its rules: a daylight-saving change between now and then
is the zone's). `reset` is when the first agent's account is free again: the window past the user's cap
(`--max-window`) or its vendor's limit when one holds it, else the first capped window to reset, else (no caps) the
first window to reset, as the shared book knows them (agents/agent_limits.py); none known: start now, and say so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, time, timedelta

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.events import LoopEnded
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import EventSink
from ralphloop.core.waiting import count_down
from ralphloop.files.json_text import loads
from ralphloop.files.safe_read import read_file
from ralphloop.files.store import atomic_write_json
from ralphloop.words.figures import local_time
from ralphloop.words.patterns import lazy

RESET = "reset"
_CLOCK = lazy(r"([01]?[0-9]|2[0-3]):([0-5][0-9])")
_SERVED_FOR = timedelta(hours=12)  # an instant this recently past was waited for (a kill mid-run): start at once
_DAY_AHEAD = timedelta(hours=25)  # a kept time of day further ahead is not one this flag decided (DST: 25 hours)
_RESET_AHEAD = timedelta(days=40)  # a reset further ahead than any vendor's window is a damaged book, not a plan

NextReset = Callable[[datetime], datetime | None]  # the account's next reset as the book knows it, at a time


def check_start(spec: str) -> str:
    """The flag's value in one spelling ("2:00" is "02:00"), or a one-line error naming it."""
    given = spec.strip().lower()
    found = _CLOCK.fullmatch(given)
    if given != RESET and not found:
        raise RalphError(f"--start-at {spec[:40]!r}: expected reset or a time of day HH:MM (24-hour), such as 02:00")
    return f"{int(found.group(1)):02d}:{found.group(2)}" if found else given


class StartAt:
    """The instant the run starts at, decided once (the first time it is asked) and kept in `path`; an event sink
    that clears it when the run ends."""

    def __init__(self, spec: str, path: str, next_reset: NextReset, tell: Callable[[str], None]) -> None:
        self.spec = check_start(spec)
        self.path = path
        self._next_reset = next_reset
        self._tell = tell  # the run's notices: why `reset` starts now
        self._decided = False
        self._at: datetime | None = None
        self.waited_s = 0.0  # how long the run waited for it: not the runtime budget's

    def due(self, now: datetime) -> datetime | None:
        """The instant to wait for, the first time it is asked and while it is ahead; None: start now."""
        if not self._decided:
            self._decided = True
            self._at = self._decide(now)
        return self._at if self._at is not None and self._at > now else None

    def wait(self, clock: Clock, cancel: CancelToken, emit: EventSink, ends: Callable[[], bool] | None = None) -> bool:
        """Before the first iteration: the countdown to the instant, if it is still ahead (its time kept out of the
        runtime budget); False when interrupted, or when `ends()` (the user's stop)."""
        at = self.due(clock.now())
        if at is None:
            return True
        said, began = f"--start-at {self.spec}: starting at {local_time(at)}", clock.monotonic()
        waited = count_down(clock, cancel, emit, (at - clock.now()).total_seconds(), "start", said, ends=ends)
        self.waited_s += clock.monotonic() - began
        return waited

    def __call__(self, event: object) -> None:
        """The run ended: the instant is spent (an interrupted run keeps it, to be started again)."""
        if isinstance(event, LoopEnded) and event.reason is not ExitReason.INTERRUPTED:
            self.clear()

    def clear(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._tell(f"{self.path}: cannot clear the --start-at instant ({exc.strerror or exc})")

    def _decide(self, now: datetime) -> datetime | None:
        kept = self._kept(now)
        if kept is not None and (kept > now or now - kept < _SERVED_FOR):
            return kept  # the same flag again: the instant decided before (waited for, or being waited for)
        if self.spec == RESET:
            at = self._next_reset(now)
            if at is None or not now < at < now + _RESET_AHEAD:
                self._tell("--start-at reset: no reset of the agent account's usage windows is known yet; starting now")
                return None
        else:
            at = _next_time_of_day(self.spec, now)
        try:
            atomic_write_json(self.path, {"spec": self.spec, "at": at.isoformat()})
        except OSError as exc:
            raise RalphError(f"{self.path}: cannot keep the --start-at instant ({exc.strerror or exc})") from None
        return at

    def _kept(self, now: datetime) -> datetime | None:
        """The instant kept for this same flag; None for another flag, none kept, one further ahead than this flag
        could have decided, or a damaged or hostile file (decided anew, and replaced)."""
        try:
            data = read_file(self.path, cap=4096, follow=False)
            body = loads(data) if data is not None else None
            if not isinstance(body, dict) or body.get("spec") != self.spec or not isinstance(body.get("at"), str):
                return None
            at = datetime.fromisoformat(body["at"])
        except (OSError, ValueError, RalphError):
            return None
        ahead = _RESET_AHEAD if self.spec == RESET else _DAY_AHEAD
        return at if at.tzinfo is not None and at < now + ahead else None


def _next_time_of_day(spec: str, now: datetime) -> datetime:
    """The next `HH:MM` after `now` on the machine's clock, by its zone's rules on that day."""
    hour, minute = (int(part) for part in spec.split(":"))
    day = now.astimezone().date()
    for _ in range(3):  # today, tomorrow, and the day after (a day whose HH:MM a DST change skipped)
        at = datetime.combine(day, time(hour, minute)).astimezone()  # a wall time, in the zone's rules then
        if at > now:
            return at
        day += timedelta(days=1)
    return at
