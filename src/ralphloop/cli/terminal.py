"""The terminal as `ralph run` found it, given back when the run ends, however it ends.

An agent or a grandchild may change the terminal's modes (echo off, raw input) and die before
setting them back; ralph's own spinner hides the cursor. On exit the saved modes come back, the
cursor is shown, and the alternate screen is left if ralph's own code entered it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import termios
from types import TracebackType
from typing import Any

SHOW_CURSOR = b"\x1b[?25h"
LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"


class TerminalGuard:
    """A context manager around a run. `restore()` uses only os.write and termios, no locks and no
    buffered streams, so a signal handler may call it just before os._exit."""

    def __init__(self, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.saved: list[Any] | None = None  # termios.tcgetattr of stdin, when it is a terminal
        self.on_terminal = False  # stdout is a terminal (not TERM=dumb): the cursor is shown on exit
        # Set by code that enters the alternate screen (\x1b[?1049h): leaving it is written on exit.
        # Never guessed: leaving an alternate screen nobody entered moves the cursor on some terminals.
        self.alternate_screen = False

    def __enter__(self) -> TerminalGuard:
        with contextlib.suppress(OSError, termios.error):
            if os.isatty(self.stdin_fd):
                self.saved = termios.tcgetattr(self.stdin_fd)
        with contextlib.suppress(OSError):
            self.on_terminal = os.isatty(self.stdout_fd) and os.environ.get("TERM") != "dumb"
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()  # what ralph printed goes out before the cursor comes back
        self.restore()

    def restore(self) -> None:
        """The saved modes back (only from the foreground: a background tcsetattr would stop ralph with
        SIGTTOU), the cursor shown, the alternate screen left if ralph entered it."""
        if self.saved is not None:
            with contextlib.suppress(OSError, termios.error):
                if _foreground(self.stdin_fd) and termios.tcgetattr(self.stdin_fd) != self.saved:
                    termios.tcsetattr(self.stdin_fd, termios.TCSANOW, self.saved)
        if self.on_terminal:
            with contextlib.suppress(OSError):
                os.write(self.stdout_fd, (LEAVE_ALTERNATE_SCREEN if self.alternate_screen else b"") + SHOW_CURSOR)


def _foreground(fd: int) -> bool:
    """Whether ralph may set the terminal's modes without being stopped: it is in the terminal's
    foreground process group, or the terminal is not its controlling terminal (no job control)."""
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return True
