"""Archives (seed 003 F9): the feature folder moved to `.ralph/archive/<timestamp>-<feature>/`.

A move is one rename on one filesystem: at any instant the folder is whole under one name or the other, so a kill
(even SIGKILL) loses nothing. When the archive is on another filesystem (`.ralph/archive` a link or a mount), the
folder is copied there under a hidden `.partial` name, the copy is compared with the folder file by file, it takes
its final name, and only then does the folder go: renamed out of the way first (one rename), then deleted, so
`.ralph/<feature>` is never seen half-removed. An existing destination is never written over: a taken name gets a
`-2`, `-3` ... suffix. The caller holds the feature's run lock: no loop writes into the folder while it moves.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from collections.abc import Callable, Iterator
from datetime import datetime

from ralphloop.project.paths import FeaturePaths

MAX_SUFFIX = 1000  # archives of one feature within one second: far past any real use
# Not copied across filesystems: the lock is the archiving command's own, and means nothing outside a live run.
_NOT_COPIED = (".lock",)


def archive_feature(paths: FeaturePaths, now: datetime) -> str:
    """Move the feature folder into the archive; returns where it is now."""
    os.makedirs(paths.archive_root, exist_ok=True)
    _sweep(paths)
    for target in _free_names(paths, now.strftime("%Y%m%d-%H%M%S")):
        try:
            os.rename(paths.dir, target)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                continue  # taken between the look and the rename: never written over, the next name is tried
            if exc.errno != errno.EXDEV:
                raise
            return _copy_then_remove(paths, target)
        return target
    raise OSError(errno.EEXIST, f"no free name in {paths.archive_root} for {paths.name}")


def newest_archive(paths: FeaturePaths) -> str | None:
    """The folder this feature was last archived to, for a reader that followed the feature before a completed run
    moved it (`ralph monitor`); None when there is none."""
    from ralphloop.project.resolve import newest_archived  # the one reading of the archive's names

    found = newest_archived(paths.project_root, paths.name)
    return found.dir if found is not None else None


def _real_folder(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _free_names(paths: FeaturePaths, stamp: str) -> Iterator[str]:
    """`<stamp>-<name>`, then `-2`, `-3` ... : the names nothing holds yet. rename(2) puts a folder over an *empty*
    folder only, so one made in the instant between this look and the rename would hold nothing to lose."""
    for suffix in range(1, MAX_SUFFIX + 1):
        target = os.path.join(paths.archive_root, f"{stamp}-{paths.name}" + (f"-{suffix}" if suffix > 1 else ""))
        if not os.path.lexists(target):
            yield target


def _copy_then_remove(paths: FeaturePaths, target: str) -> str:
    """The move across filesystems: copy, check the copy, name it, then remove the folder."""
    import tempfile  # with random and weakref: ~2 ms of every `ralph run`'s start, for a rare move

    staging = tempfile.mkdtemp(prefix=f".{paths.name}.", suffix=".partial", dir=paths.archive_root)
    try:
        shutil.copytree(paths.dir, staging, symlinks=True, dirs_exist_ok=True, ignore=_top_level_lock(paths.dir))
        problem = _difference(paths.dir, staging)
        if problem:
            raise OSError(errno.EIO, f"the copy in {paths.archive_root} differs from {paths.dir}: {problem}")
        if os.path.lexists(target):
            raise OSError(errno.EEXIST, f"{target} appeared while the copy was made")
        os.rename(staging, target)  # the same filesystem now: the archive appears whole, or not at all
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # the folder is untouched: only the half copy goes
        raise
    aside = tempfile.mkdtemp(prefix=f".{paths.name}.", suffix=".archived", dir=paths.ralph_dir)
    os.rename(paths.dir, os.path.join(aside, paths.name))  # `.ralph/<name>` is gone at once, never half of it
    # The archive is whole and checked: what cannot be deleted stays in a hidden folder no command takes for a feature.
    shutil.rmtree(aside, ignore_errors=True)
    return target


def _sweep(paths: FeaturePaths) -> None:
    """What an archiving of this feature killed midway left: a half copy, or a checked copy's original half
    deleted. Only an archiver of this feature makes them, and it holds the lock the caller holds now."""
    left = re.compile(rf"\.{re.escape(paths.name)}\.[a-z0-9_]{{8}}\.(partial|archived)")
    for folder in (paths.archive_root, paths.ralph_dir):
        with contextlib.suppress(OSError):
            for entry in os.listdir(folder):
                path = os.path.join(folder, entry)
                if left.fullmatch(entry) and _real_folder(path):
                    shutil.rmtree(path, ignore_errors=True)


def _top_level_lock(top: str) -> Callable[[str, list[str]], set[str]]:
    """copytree's `ignore`: the feature's own lock, in its top folder only."""
    return lambda folder, names: set(_NOT_COPIED) & set(names) if folder == top else set()


def _difference(source: str, copy: str) -> str | None:
    """The first entry that differs between the two trees (missing, extra, another kind, other bytes), or None."""
    import filecmp

    for folder, dirs, files in os.walk(source):
        rel = os.path.relpath(folder, source)
        there = os.path.normpath(os.path.join(copy, rel))
        names = sorted(name for name in dirs + files if rel != "." or name not in _NOT_COPIED)
        if sorted(os.listdir(there)) != names:
            return f"{rel}: not the same entries"
        for name in names:
            mine, theirs = os.path.join(folder, name), os.path.join(there, name)
            if os.path.islink(mine) or os.path.islink(theirs):
                if not (os.path.islink(theirs) and os.readlink(mine) == os.readlink(theirs)):
                    return os.path.join(rel, name)
            elif os.path.isfile(mine) and not (os.path.isfile(theirs) and filecmp.cmp(mine, theirs, shallow=False)):
                return os.path.join(rel, name)
    return None
