"""Readers for state files, kept apart so `ralph status` imports nothing heavy (no tempfile, no msgspec).

ralph writes these files itself and never as links; the agent works in the same folder and could put
anything in their place, so each is read through safe_read: a FIFO, a device, a folder, a link or a
huge file is refused with one line naming it, and a damaged one reads as absent.
"""

from __future__ import annotations

import fcntl
import os
import stat

from ralphloop.files.json_text import loads
from ralphloop.files.safe_read import STATE_CAP, FileRefused, maybe_not_text, read_file, read_tail, scrub, shown_path

TYPE_CHECKING = False  # typing costs ~9 ms of import; status must stay fast
if TYPE_CHECKING:
    from typing import Any


def read_json_object(path: str | os.PathLike[str], label: str | None = None) -> dict[str, Any] | None:
    """The JSON object in `path`, or None when the file is missing or not a JSON object; FileRefused
    when it is not a regular file (or is too big to be one of ralph's). NULs and lone surrogates in its
    strings are replaced, so that what it holds can be printed and written back."""
    raw = read_file(path, label, cap=STATE_CAP, follow=False)
    if raw is None:
        return None
    try:
        value = loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    return scrub(value) if maybe_not_text(raw) else value


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

    Probes with a shared non-blocking flock on a read-only descriptor, so it never creates the file and
    never disturbs the holder. FileRefused when the lock is not a regular file (the run could not take it).
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise FileRefused(f"{shown_path(path)}: cannot read the run's lock: {exc.strerror}; remove it") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(f"{shown_path(path)}: not a regular file where the run's lock belongs; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return read_lock_holder(path) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def read_tail_lines(path: str | os.PathLike[str], max_bytes: int, label: str | None = None) -> list[bytes] | None:
    """The whole lines in the last `max_bytes` of a file of ralph's (a line cut by the start is dropped,
    unless it is the only one); None when there is none. FileRefused when it is not a regular file."""
    found = read_tail(path, label, max_bytes=max_bytes, follow=False)
    if found is None:
        return None
    data, size = found
    lines = data.split(b"\n")
    return lines[1:] if size > max_bytes and len(lines) > 1 else lines


def tail_has(path: str | os.PathLike[str], line: bytes, *, prefix: bool = False, max_bytes: int = 1 << 20) -> bool:
    """Whether one of the last lines of `path` (in its last `max_bytes`) is `line` (or starts with it): a
    record a killed run wrote already is not written twice."""
    lines = read_tail_lines(path, max_bytes) or []
    return any(found.startswith(line) for found in lines) if prefix else line in lines
