"""Lock files a killed git command left behind, found before ralph's own git commands need them.

git writes `<file>.lock` beside a file it is about to replace (the index, HEAD, a branch) and renames it over
the file when done; a git process killed meanwhile (a timeout, SIGKILL, a crash) leaves the lock, and every
later command that needs the file fails until someone removes it. ralph's rule, one a user would follow:

a lock is **stale** when it was there before and after a look at every process (the same file: inode and
time unchanged), and no git process (`git` or `git-*`) had its working folder inside the worktree or the
repository's .git folders during that look. A new git cannot make a lock while the old one exists, so a
holder that matters is one already running. Stale locks are removed (and the caller says so); any other lock
is left alone, with the process that may hold it named.

The lock of one of ralph's private index files (`.git/ralph/<feature>.index`, its `.undo` copy) has one possible
creator: a git command of ralph's, run with GIT_INDEX_FILE naming that file (the run holding the feature's lock
starts no other; one a killed run started may still be at work). Such a lock is stale once no live git process
names its file so, whatever other git runs in the repository (an editor's, a pager left open, the agent's);
a git process whose environment cannot be read counts as a holder when it works in the repository.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from msgspec import Struct


class Locks(Struct, frozen=True):
    """What a look at the lock files found: those removed, and those left because git may hold them."""

    removed: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    holder: int | None = None  # a git process running in the repository (None: a lock made during the look)


Stamp = tuple[int, int]


def clear_stale(locks: Sequence[str], folders: Sequence[str], private: Mapping[str, str] | None = None) -> Locks:
    """Remove those of `locks` that no live process can hold; `folders` are the repository's (worktree, .git);
    `private` maps the locks of ralph's own index files to those files."""
    before = {lock: stamp for lock in locks if (stamp := _stamp(lock)) is not None}
    if not before:  # the usual case: a few stat calls, no look at the processes
        return Locks()
    owners = {lock: os.path.realpath(index) for lock, index in (private or {}).items()}
    gits = _git_processes(folders, any(lock in owners for lock in before))
    holders = {lock: _holder(gits, owners.get(lock)) for lock in before}
    holder = next((pid for pid in holders.values() if pid is not None), None)
    removed: list[str] = []
    held = [lock for lock, pid in holders.items() if pid is not None]
    for lock, stamp in before.items():
        if holders[lock] is not None:
            continue
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
    return Locks(tuple(removed), tuple(held), holder)


class _Git(Struct, frozen=True):
    """A live git process: its pid, whether it works in the repository, the index file its environment names
    ("" for none, None when it cannot be read)."""

    pid: int
    here: bool
    index: str | None = ""


def _holder(gits: Sequence[_Git], index: str | None) -> int | None:
    """The pid of a git process that may hold the lock: for a private index's (`index`), one that names that
    file, or whose environment is unknown and works here; for any other, one that works here."""
    for found in gits:
        if index is None and found.here:
            return found.pid
        if index is not None and (found.index == index or (found.index is None and found.here)):
            return found.pid
    return None


def _git_processes(folders: Sequence[str], environments: bool) -> list[_Git]:
    """Every live git process (`git` or `git-*`) that works in `folders` or, with `environments`, whose
    GIT_INDEX_FILE may name a file anywhere. A process whose folder cannot be read counts as working here."""
    import psutil  # only when a lock file exists: never on the usual path

    tops = [os.path.realpath(folder) for folder in folders]
    found: list[_Git] = []
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
            found.append(_Git(process.pid, True, None))
            continue
        here = any(cwd == top or cwd.startswith(top.rstrip("/") + "/") for top in tops)
        if not environments:
            if here:
                found.append(_Git(process.pid, here))
            continue
        try:
            index = process.environ().get("GIT_INDEX_FILE", "")
        except psutil.NoSuchProcess:
            continue
        except psutil.Error:
            found.append(_Git(process.pid, here, None))
            continue
        found.append(_Git(process.pid, here, os.path.realpath(os.path.join(cwd, index)) if index else ""))
    return found


def _stamp(path: str) -> Stamp | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns
