"""`ralph run --log-file FILE` (seed 002's ralph.log): the run's screen lines, each with a timestamp,
appended to a file, alongside the terminal."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from datetime import datetime

from ralphloop.words.textsafe import strip_terminal_controls


class StampedLines(io.TextIOBase):
    """A text stream that writes whole lines to `handle`, each prefixed with the local time.
    Lines redrawn in place on a terminal (a carriage return) keep only their final text."""

    def __init__(self, handle: io.TextIOBase, now: Callable[[], datetime] = datetime.now) -> None:
        self.handle = handle
        self.now = now
        self.pending = ""
        self.failed = False  # a full disk ends the copy, never the run: the screen has the same lines

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            shown = strip_terminal_controls(line.rsplit("\r", 1)[-1])
            self._guarded(self.handle.write, f"[{self.now():%Y-%m-%d %H:%M:%S}] {shown}\n")
        return len(text)

    def flush(self) -> None:
        self._guarded(self.handle.flush)

    def close(self) -> None:
        if self.pending.strip():
            self.write("\n")
        with contextlib.suppress(OSError):  # what the buffer held could not be written either
            self.handle.close()

    def _guarded(self, write: Callable[..., object], *args: str) -> None:
        if self.failed:
            return
        try:
            write(*args)
        except OSError:
            self.failed = True
