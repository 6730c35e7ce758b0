"""Wall time for records, monotonic time for durations, and waiting: the real clock and the one tests move."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

from msgspec import Struct, field


class Clock(Protocol):
    """Wall time for records, monotonic time for durations, and waiting; tests pass a fake."""

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float, wake_fd: int | None = None) -> None:
        """Wait `seconds`, or less when `wake_fd` becomes readable (a cancel token's pipe)."""
        ...


class SystemClock(Struct):
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, wake_fd: int | None = None) -> None:
        if seconds <= 0:
            return
        if wake_fd is None:
            time.sleep(seconds)
            return
        import select

        select.select([wake_fd], [], [], seconds)


class FakeClock(Struct):
    """A clock that moves only when told to: `advance(seconds)`."""

    start: datetime = field(default_factory=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    elapsed: float = 0.0
    slept: list[float] = field(default_factory=list)  # every sleep asked for, in order

    def now(self) -> datetime:
        from datetime import timedelta

        return self.start + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        return self.elapsed

    def advance(self, seconds: float) -> None:
        self.elapsed += seconds

    def sleep(self, seconds: float, wake_fd: int | None = None) -> None:
        self.slept.append(seconds)
        self.elapsed += max(0.0, seconds)
