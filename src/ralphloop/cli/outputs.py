"""ralph's own output when nobody can read it any more: a terminal that hung up (an SSH connection dropped, a
tmux pane killed) or a pipe whose reader left (`ralph run | head`).

A write there fails (EIO, EPIPE). Here it never raises: `ralph run` wraps stdout and stderr at its start, and the
dead descriptor is pointed at /dev/null, so every later write goes nowhere quietly (the final summary,
a warning, a signal handler's message, the interpreter's last flush, a child that inherits it). Whoever
listens (`ralph run`) is told once, and stops the run the way a hang-up does. `OutputWatch` notices the loss
at once, even while ralph writes nothing (an agent working for an hour under `| head`).

SIGPIPE stays ignored (Python's default): EPIPE on ralph's own output is the hang-up, while EPIPE on an
agent's stdin (an agent that stopped reading) is only that agent's business.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from collections.abc import Callable
from typing import Any, TextIO, cast

# Errors that mean the reader is gone for good: a closed pipe or socket, a terminal that hung up.
_GONE = frozenset({errno.EPIPE, errno.EIO, errno.ECONNRESET, errno.ENXIO})

_listeners: list[Callable[[], None]] = []
_lost: set[int] = set()


def on_lost(callback: Callable[[], None]) -> Callable[[], None]:
    """Call `callback` (from any thread) when stdout or stderr is lost, at once if one is lost already (before
    a run began to listen); returns what stops that."""
    _listeners.append(callback)
    if _lost:
        callback()
    return lambda: _listeners.remove(callback) if callback in _listeners else None


def lose(fd: int) -> None:
    """`fd` leads nowhere any more: point it at /dev/null, then tell the listeners (once per descriptor)."""
    if fd in _lost:
        return
    _lost.add(fd)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    for callback in list(_listeners):
        callback()


class SafeStream(io.TextIOBase):
    """A text stream whose writes and flushes never raise; a write to a reader that is gone loses its fd."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            self.stream.write(text)
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            self._failed(exc)
        return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, OSError) and exc.errno in _GONE:
            with contextlib.suppress(OSError, ValueError):
                lose(self.stream.fileno())

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        try:
            return self.stream.isatty()
        except (OSError, ValueError):
            return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return cast(str, getattr(self.stream, "encoding", "utf-8"))

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return cast("str | None", getattr(self.stream, "errors", None))


def guard() -> None:
    """sys.stdout and sys.stderr as SafeStreams for the rest of the process: nothing `ralph run` writes can fail,
    up to the error line main() may print after it and the interpreter's last flush. Other commands keep
    Python's ways: `ralph monitor | head` still ends at its first write that fails."""
    if sys.stdout is not None and not isinstance(sys.stdout, SafeStream):
        sys.stdout = cast(TextIO, SafeStream(sys.stdout))
    if sys.stderr is not None and not isinstance(sys.stderr, SafeStream):
        sys.stderr = cast(TextIO, SafeStream(sys.stderr))


class OutputWatch:
    """A thread that waits for stdout or stderr (a pipe, a socket, a terminal) to report an error or a hang-up,
    and then loses it: the run learns at once that its reader left, not at its next write."""

    def __init__(self, fds: tuple[int, ...] = (1, 2)) -> None:
        self.fds = tuple(fd for fd in dict.fromkeys(fds) if _watchable(fd))
        self._wake: tuple[int, int] | None = None
        self._thread: Any = None

    def start(self) -> None:
        if not self.fds or self._wake is not None:
            return
        import threading  # only a run watches its outputs

        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._watch, name="ralph-output-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._wake is None:
            return
        read, write = self._wake
        with contextlib.suppress(OSError):
            os.write(write, b"x")
        self._thread.join()
        for fd in (read, write):
            os.close(fd)
        self._wake = None

    def _watch(self) -> None:
        import select

        assert self._wake is not None
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, 0)  # no events asked for: only an error or a hang-up is reported
        poller.register(self._wake[0], select.POLLIN)
        watched = set(self.fds)
        while watched:
            for fd, mask in poller.poll():
                if fd == self._wake[0]:
                    return
                poller.unregister(fd)
                watched.discard(fd)
                if mask & (select.POLLERR | select.POLLHUP):
                    lose(fd)


def _watchable(fd: int) -> bool:
    """A pipe, a socket or a terminal: what a reader can leave. Files and /dev/null never report a loss."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))
