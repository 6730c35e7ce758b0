"""Readers for state files, kept apart so `ralph status` imports nothing heavy (no tempfile, no msgspec)."""

from __future__ import annotations

import fcntl
import json
import os
import stat

TYPE_CHECKING = False  # typing costs ~9 ms of import; status must stay fast
if TYPE_CHECKING:
    from typing import Any


def read_json_object(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The JSON object in `path`, or None when the file is missing or not an object."""
    try:
        with open(path, "rb") as handle:
            value = json.loads(handle.read())
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_lock_holder(path: str | os.PathLike[str]) -> int | None:
    """The PID written on a lock file's first line, if any."""
    text = read_lock_note(path).partition("\n")[0].strip()
    return int(text) if text.isdigit() and len(text) < 10 else None


def read_lock_note(path: str | os.PathLike[str]) -> str:
    """A lock file's text (its holder's PID, then what it runs): at most 4 KiB, never blocking on a FIFO."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, 4096).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def lock_holder_alive(path: str | os.PathLike[str]) -> int | None:
    """The PID holding the lock at `path` right now, 0 when held by an unknown PID, None when free.

    Probes with a shared non-blocking flock on a read-only descriptor, so it
    never creates the file and never disturbs the holder.
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return read_lock_holder(path) or 0
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def read_tail_lines(path: str | os.PathLike[str], max_bytes: int) -> list[bytes] | None:
    """The whole lines in the last `max_bytes` of a regular file (a line cut by the start is dropped,
    unless it is the only one); None when it cannot be read or is not a regular file (a FIFO or a
    device named by a hostile status.json must neither block nor flood the reader)."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        start = max(0, info.st_size - max_bytes)
        data = os.pread(fd, max_bytes, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    return lines[1:] if start > 0 and len(lines) > 1 else lines


def tail_has(path: str | os.PathLike[str], line: bytes, *, prefix: bool = False, max_bytes: int = 1 << 20) -> bool:
    """Whether one of the last lines of `path` (in its last `max_bytes`) is `line` (or starts with it): a
    record a killed run wrote already is not written twice."""
    lines = read_tail_lines(path, max_bytes) or []
    return any(found.startswith(line) for found in lines) if prefix else line in lines
