"""Durable file primitives: atomic replace, fsynced appends, and the run lock.

Every state file is written to a temporary file in the same folder, fsynced (all but
the views the loop writes anew at its next step: status.json) and renamed over the old
one, so a reader (the monitor, `ralph status`) sees either the old or the new content,
never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import itertools
import os
import stat
import time
from collections.abc import Iterator
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_lock_holder
from ralphloop.files.schemas import MARK, MARK_KEY
from ralphloop.words.redact import redact_text

SCHEMA_VERSION = 1
# An atomic write's temporary file: this, "ralph-", the writer's PID and "-", then 8 characters (_temporary) (the PID
# tells a later run whether its writer is gone, "ralph-" that the file is ralph's where the user's files are too:
# state/leftovers.py). The prefix alone is what .gitignore and FeaturePaths.is_runtime match.
TEMP_PREFIX = ".tmp-"
TEMP_MARK = "ralph-"


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, sync: bool = True) -> None:
    """Replace `path` with `data` so that readers never see a partial file. `sync=False`: not fsynced first, for
    a file the loop writes anew at its next step (status.json): readers still see the old or the new whole, and
    a machine that stops meanwhile may lose its last write, not more."""
    target = os.fspath(path)
    mode = _mode_for(target)
    fd, tmp = _temporary(os.path.dirname(target) or ".", mode)
    try:
        try:
            if mode & _umask():  # os.open's mode lost bits to the umask that the file had
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# The temporary files' last 8 characters: this process's count of them (mkstemp's random names cost more; the
# PID before them keeps two processes apart).
_TEMPORARIES = itertools.count()


def _temporary(folder: str, mode: int) -> tuple[int, str]:
    """A new temporary file in `folder`, open for writing: (its descriptor, its path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
    while True:
        number = next(_TEMPORARIES) & 0xFFFFFFFF
        tmp = os.path.join(folder, f"{TEMP_PREFIX}{TEMP_MARK}{os.getpid()}-{number:08x}")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:  # left by an earlier process of the same PID
            continue


def _mode_for(target: str) -> int:
    """Keep an existing file's permissions; give a new one the usual 0666 less the umask."""
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


@functools.cache
def _umask() -> int:
    # Reading the umask means setting it; do it once, at the first new file.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str, *, sync: bool = True) -> None:
    """Atomically replace `path` with UTF-8 `text`."""
    atomic_write_bytes(path, text.encode("utf-8"), sync=sync)


def atomic_write_json(
    path: str | os.PathLike[str],
    value: dict[str, Any],
    version: int = SCHEMA_VERSION,
    *,
    marked: bool = False,
    sync: bool = True,
) -> None:
    """Atomically replace `path` with `value` as indented JSON (with its schema_version first), secrets masked:
    ralph's state files hold the agent's words (its last message, reasons, learnings). `marked`: a runtime file
    whose name another tool uses too carries ralph's mark after the version (project/owner.py)."""
    from msgspec import json as fast_json  # loaded by every command that writes state; not by `ralph report`

    mark = {MARK_KEY: MARK} if marked else {}
    body = {"schema_version": version, **mark, **value}
    # msgspec: the same indented JSON as json.dumps(indent=2, ensure_ascii=False), whose indenting encoder is
    # pure Python (~0.1 ms a state file, ~10 of them an iteration); an exponent is written 1e16, not 1e+16
    text = fast_json.format(fast_json.encode(body), indent=2).decode("utf-8")
    atomic_write_text(path, redact_text(text) + "\n", sync=sync)


def append_text(path: str | os.PathLike[str], text: str, *, sync: bool = True, follow: bool = True) -> None:
    """Append `text` (whole lines) in one write and fsync it, secrets masked: append-only records are never
    rewritten. When the file does not end with a newline (a crash cut its last line, or the agent appended
    half a line of its own), a newline comes first, so that what ralph writes is whole whatever was there.
    Anything but a regular file (or, `follow=False`: a link, in place of a file only ralph writes) is refused
    with FileRefused naming it."""
    from ralphloop.files.safe_read import FileRefused, shown_path

    # O_NONBLOCK: a FIFO put in a record's place is refused at once instead of hanging the loop on it
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(os.fspath(path), flags | (0 if follow else os.O_NOFOLLOW), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(f"{shown_path(path)}: a symbolic link where ralph keeps its own file; remove it") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{shown_path(path)}: not a regular file; remove or replace it")
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            text = "\n" + text
        os.write(fd, redact_text(text).encode("utf-8"))
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


HOLD_WAIT_S = 10.0  # a read-modify-write takes milliseconds: a lock held this long is stuck, not busy


@contextlib.contextmanager
def held(lock_path: str, wait_s: float = HOLD_WAIT_S) -> Iterator[None]:
    """An exclusive flock on `lock_path` (made 0600 if absent, never followed as a link) for a read-modify-write
    of a file several loops share: the call ledger, the agents' limits. A lock still held after `wait_s` (a
    stopped process holding it) is an OSError, never a hang of every loop."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OSError(errno.EWOULDBLOCK, f"another process has held {lock_path} for {wait_s:g}s") from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # closing the last descriptor drops the flock


_PROBE_RETRIES = 20  # a refusal with no PID in the file is retried this often, 10 ms apart


class RunLock:
    """An exclusive flock on a side file: a crashed holder's lock dies with its process.

    The holder writes its PID into the file so that a refused caller can name it.
    """

    def __init__(self, path: str | os.PathLike[str], what: str, note: str = "") -> None:
        self.path = os.fspath(path)
        self.what = what
        self.note = note  # written under the PID, for a refused caller to read (what the holder runs)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise RalphError naming the PID that holds it (FileRefused naming the file when a
        folder, a FIFO or a link is in its place: never followed, never waited on)."""
        from ralphloop.files.safe_read import check_file

        check_file(self.path, follow=False)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as exc:  # put there since the check
            raise RalphError(f"{self.path}: cannot open the lock: {exc.strerror or exc}") from None
        for attempt in range(_PROBE_RETRIES + 1):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                holder = read_lock_holder(self.path)
                # No PID in the file: most likely a reader's probe (`ralph status`, the monitor) holding a
                # shared lock for a few microseconds. A real holder writes its PID at once.
                if holder or attempt == _PROBE_RETRIES:
                    os.close(fd)
                    raise RalphError(self.refusal(holder)) from None
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{self.note}\n".encode() if self.note else f"{os.getpid()}\n".encode())
        self._fd = fd

    def refusal(self, holder: int | None) -> str:
        """The one line a caller refused the lock is told."""
        who = f"PID {holder}" if holder else "another process"
        return f"{self.what} is already running ({who} holds {self.path})"

    def release(self) -> None:
        """Drop the lock; the file stays, empty, so nobody reads a stale PID from it."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
