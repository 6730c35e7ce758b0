"""A cancellation flag that a signal handler can set and a `select` loop can wait on."""

from __future__ import annotations

import contextlib
import os
import signal


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

    def quiet(self) -> None:
        """Empty the pipe of what woke a wait though the token is not set: the byte of a signal whose handler does
        not cancel (wake_on_signals). Each wait on `fileno()` calls it when it wakes unset, then looks at
        `is_set()` again before it waits again, so a cancellation that comes meanwhile is never missed."""
        if self.count:
            return
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._read, 4096):
                pass

    def wake_on_signals(self) -> int:
        """Make every signal a Python handler catches also write a byte to this token's pipe, so a wait on
        `fileno()` wakes for it; returns the wake-up fd that was set before (-1: none), to put back. From the
        main thread only.

        Why: a handler runs between bytecodes of the main thread. A signal that comes just before the main
        thread enters `epoll_wait` (or that the kernel hands to another thread) interrupts nothing, and the
        handler would wait for the poll's timeout: a Ctrl+C during a hook with no timeout did nothing for
        minutes. A wait that wakes to find the token not set (a handler that does not cancel: a plug-in's)
        empties the pipe with `quiet()` and waits again."""
        return signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
