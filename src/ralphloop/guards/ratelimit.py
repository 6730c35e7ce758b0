"""The per-account rate limit: never more than N agent starts in any rolling 60 minutes.

Pure functions over a list of start times; `ralphloop.state.calls` keeps that list in a
file shared by every loop of the user. A clock-hour reset would allow 2N starts across
an hour boundary; a rolling window does not: a start is granted only when fewer than N
starts happened in the 60 minutes before it.

A start later than `now` (another process's clock ahead of ours, or our clock stepped
back) stays in the window until `now` passes it by an hour, so skew never frees slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from msgspec import Struct

WINDOW_S = 3600.0
_WINDOW = timedelta(seconds=WINDOW_S)

# How many starts beyond `limit` are kept. Only the newest `limit` decide anything for
# that limit; the extra ones serve a loop of the same account configured with a larger one.
KEEP_EXTRA = 1000


class Slot(Struct, frozen=True):
    """One decision (or, from `peek`, the decision a start now would get)."""

    granted: bool
    used: int  # starts in the window after this decision (including the one just granted)
    limit: int
    next_free: datetime | None  # when the oldest start leaves the window; when not granted, when a slot frees
    resets_at: datetime | None  # the same instant as next_free (status.json rateLimitResetsAt)

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def wait_s(self, now: datetime) -> float:
        """Seconds from `now` until a start would be granted: 0 when granted."""
        if self.granted or self.next_free is None:
            return 0.0
        return max(0.0, (self.next_free - now).total_seconds())


def in_window(starts: Sequence[datetime], now: datetime) -> list[datetime]:
    """The starts less than an hour before `now`, oldest first; starts after `now` stay."""
    return sorted(moment for moment in starts if now - moment < _WINDOW)


def take(starts: Sequence[datetime], now: datetime, limit: int) -> tuple[list[datetime], Slot]:
    """Grant a start at `now` when fewer than `limit` starts are in the window.

    Returns the starts to keep (pruned to the window, oldest first, `now` added when
    granted, at most `limit + KEEP_EXTRA` of the newest) and the decision.
    """
    _check_limit(limit)
    window = in_window(starts, now)
    granted = len(window) < limit
    if granted:
        window.append(now)
        window.sort()
    kept = window[-(limit + KEEP_EXTRA) :]
    return kept, _slot(window, granted, limit)


def peek(starts: Sequence[datetime], now: datetime, limit: int) -> Slot:
    """What `take` would decide at `now`, without taking: `used` counts the starts already in the window."""
    _check_limit(limit)
    window = in_window(starts, now)
    return _slot(window, len(window) < limit, limit)


def _slot(window: list[datetime], granted: bool, limit: int) -> Slot:
    if not window:
        return Slot(granted=granted, used=0, limit=limit, next_free=None, resets_at=None)
    # The oldest start leaves first. With more than `limit` starts in the window (a lower limit than
    # before, or a loop of the same account allowing more), a slot frees once all but limit-1 have left.
    frees = window[max(0, len(window) - limit)] + _WINDOW
    return Slot(granted=granted, used=len(window), limit=limit, next_free=frees, resets_at=frees)


def _check_limit(limit: int) -> None:
    if limit < 1:
        raise ValueError(f"rate limit must be at least 1 start per hour, not {limit}")
