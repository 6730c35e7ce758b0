"""A cancellation flag that a signal handler can set and a `select` loop can wait on."""

from __future__ import annotations

import contextlib
import os


class CancelToken:
    """Set by Ctrl+C or SIGTERM; readable through `fileno()` so blocking waits wake at once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self.count = 0
        # The process group of the agent running now, so a second Ctrl+C can kill it at once.
        self.active_pgid: int | None = None

    def set(self) -> None:
        """Request cancellation; safe to call from a signal handler."""
        self.count += 1
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._write, b"x")

    def is_set(self) -> bool:
        return self.count > 0

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
