"""An agent's or a hook's log as it runs: stdout as it comes, stderr line by line behind a `[stderr] ` mark,
bounded (what every runner writes, so a replayed run's log reads as a real one's)."""

from __future__ import annotations

import contextlib
import os

_CHUNK = 64 * 1024
_TRUNCATED = b"\n[ralph: log limit reached; the rest of this iteration's output is read but not logged]\n"


class IterationLog:
    """The iteration log: stdout as it comes, stderr line by line behind a `[stderr] ` mark, bounded.
    It is given output already redacted (see processes/local.py), so writing any part of it early leaks nothing."""

    def __init__(self, path: str, limit: int) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._limit = limit
        self._written = 0
        self._stderr_partial = b""
        self._full = False
        self._mid_line = False  # stdout's last byte was not a newline

    def stdout(self, data: bytes) -> None:
        if data:
            self._mid_line = not data.endswith(b"\n")
            self._write(data)

    def stderr(self, data: bytes, *, final: bool = False) -> None:
        pending = self._stderr_partial + data
        lines = pending.split(b"\n")
        self._stderr_partial = lines.pop()
        if final or len(self._stderr_partial) > _CHUNK:
            if self._stderr_partial:
                lines.append(self._stderr_partial)
            self._stderr_partial = b""
        if lines:
            # A stderr line always starts a line of its own, so that it is never read as stdout.
            start = b"\n" if self._mid_line else b""
            self._mid_line = False
            self._write(start + b"".join(b"[stderr] " + line + b"\n" for line in lines))

    def _write(self, data: bytes) -> None:
        if self._full:
            return
        if self._written + len(data) > self._limit:
            data = data[: max(0, self._limit - self._written)] + _TRUNCATED
            self._full = True
        os.write(self._fd, data)
        self._written += len(data)

    def close(self) -> None:
        self.stderr(b"", final=True)
        with contextlib.suppress(OSError):
            os.fsync(self._fd)
        os.close(self._fd)
