"""Lock files a killed git command left behind, found before ralph's own git commands need them.

git writes `<file>.lock` beside a file it is about to replace (the index, HEAD, a branch) and renames it over
the file when done; a git process killed meanwhile (a timeout, SIGKILL, a crash) leaves the lock, and every
later command that needs the file fails until someone removes it. ralph's rule, one a user would follow:

a lock is **stale** when it was there before and after a look at every process (the same file: inode and
time unchanged), and no git process (`git` or `git-*`) had its working folder inside the worktree or the
repository's .git folders during that look. A new git cannot make a lock while the old one exists, so a
holder that matters is one already running. Stale locks are removed (and the caller says so); any other lock
is left alone, with the process that may hold it named.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from msgspec import Struct


class Locks(Struct, frozen=True):
    """What a look at the lock files found: those removed, and those left because git may hold them."""

    removed: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    holder: int | None = None  # a git process running in the repository (None: a lock made during the look)


Stamp = tuple[int, int]


def clear_stale(locks: Sequence[str], folders: Sequence[str]) -> Locks:
    """Remove those of `locks` that no live process can hold; `folders` are the repository's (worktree, .git)."""
    before = {lock: stamp for lock in locks if (stamp := _stamp(lock)) is not None}
    if not before:  # the usual case: a few stat calls, no look at the processes
        return Locks()
    holder = git_process_in(folders)
    if holder is not None:
        return Locks(held=tuple(before), holder=holder)
    removed: list[str] = []
    held: list[str] = []
    for lock, stamp in before.items():
        now = _stamp(lock)
        if now is None:
            continue  # its holder finished meanwhile
        if now != stamp:
            held.append(lock)  # made again during the look: a git that just started holds it
            continue
        try:
            os.unlink(lock)
        except FileNotFoundError:
            continue
        except OSError:
            held.append(lock)
            continue
        removed.append(lock)
    return Locks(tuple(removed), tuple(held))


def git_process_in(folders: Sequence[str]) -> int | None:
    """The pid of a live git process whose working folder is inside one of `folders`; None when there is none.
    A git process whose folder cannot be read (another user's) counts: it may be working here."""
    import psutil  # only when a lock file exists: never on the usual path

    tops = [os.path.realpath(folder) for folder in folders]
    for process in psutil.process_iter(["name"]):
        name = process.info.get("name") or ""
        if name != "git" and not name.startswith("git-"):
            continue
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            cwd = os.path.realpath(process.cwd())
        except psutil.NoSuchProcess:
            continue
        except psutil.Error:
            return process.pid
        if any(cwd == top or cwd.startswith(top.rstrip("/") + "/") for top in tops):
            return process.pid
    return None


def _stamp(path: str) -> Stamp | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns
