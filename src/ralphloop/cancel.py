"""A cancellation flag that a signal handler can set and a `select` loop can wait on."""

from __future__ import annotations

import contextlib
import os
import select


class CancelToken:
    """Set by Ctrl+C or SIGTERM; readable through `fileno()` so blocking waits wake at once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self.count = 0
        self.reason = ""
        # The process group of the agent running now, so a second Ctrl+C can kill it at once.
        self.active_pgid: int | None = None

    def set(self, reason: str = "interrupted") -> None:
        """Request cancellation; safe to call from a signal handler."""
        self.count += 1
        self.reason = self.reason or reason
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._write, b"x")

    def is_set(self) -> bool:
        return self.count > 0

    def fileno(self) -> int:
        return self._read

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when cancelled; True when cancelled."""
        if self.is_set():
            return True
        with contextlib.suppress(InterruptedError):
            select.select([self._read], [], [], max(0.0, seconds))
        return self.is_set()

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
