"""A write rate-limited without losing the last change: at most one write a window, and a change that comes inside
the window is written when the window ends (on a timer's thread), never dropped. A quick `Write` followed by a
two-minute `Bash: pytest` must end up showing the `Bash`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Protocol


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Timer = Callable[[float, Callable[[], None]], Cancellable]


def start_timer(delay: float, action: Callable[[], None]) -> Cancellable:
    """`action` on a daemon thread after `delay` seconds (a process that exits does not wait for it)."""
    timer = threading.Timer(max(0.0, delay), action)
    timer.daemon = True
    timer.start()
    return timer


class Trailing:
    """Calls `write` for a `change()` at once when the last such write is `every` seconds old, else once the
    window ends. The caller holds `lock` around `change()` and its own writes (which carry any pending change:
    it calls `carried()`); the timer's thread takes it too."""

    def __init__(
        self,
        lock: threading.RLock,
        write: Callable[[], None],
        every: float,
        monotonic: Callable[[], float],
        timer: Timer = start_timer,
    ) -> None:
        self.lock, self.write, self.every, self.monotonic, self.timer = lock, write, every, monotonic, timer
        self.last: float | None = None  # monotonic time of the last write for a change
        self.pending = False
        self.armed: Cancellable | None = None

    def change(self, *, defer: bool = False) -> None:
        """A change to write; `defer`: never at once, but within `every` seconds (a change too frequent and too
        small to be worth a write of its own: the next write, whatever its cause, carries it)."""
        moment = self.monotonic()
        idle = self.last is None or moment - self.last >= self.every
        if idle and not defer:
            self.last = moment
            self.write()
        elif not self.pending:
            self.pending = True
            if self.armed is None:
                left = self.every if idle or self.last is None else self.last + self.every - moment
                self.armed = self.timer(left, self._window_ended)

    def carried(self) -> None:
        """A write of the whole file has just carried the pending change, if any: no timer needs to."""
        self.cancel()

    def cancel(self) -> None:
        if self.armed is not None:
            self.armed.cancel()
            self.armed = None
        self.pending = False

    def _window_ended(self) -> None:
        with self.lock:
            self.armed = None
            if not self.pending:
                return
            self.last = self.monotonic()
            # on the timer's thread nobody could act on a failed write: the next event's write reports it
            with contextlib.suppress(OSError):
                self.write()
