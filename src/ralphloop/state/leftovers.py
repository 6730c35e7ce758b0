"""The temporary files a killed writer left: `store.atomic_write_bytes` writes `.tmp-ralph-<pid>-<8 random>` beside
its file and renames it over the file; a SIGKILL between the two leaves it, and nothing else ever removes it.

A run removes those of its workspace once it holds the feature's lock (start/recover.py): in ralph's own folders (its
state folder and logs/) any of ralph's names, an older ralph's unmarked `.tmp-<pid>-` too; in the workspace's own
folder, which for a workspace at the project root holds the user's files (a `.tmp-abcd1234` of theirs looks like an
older ralph's), only names with ralph's mark (a root goal's PROGRESS.yaml, progress.txt put back after an undo). The
lock keeps every other run out, but not `ralph prd`, `ralph report --html` or `ralph init`, which write atomically
into those folders too; so a temporary file is removed only when its writer is known to be gone:

- its name is ralph's own (the prefix, the writer's PID, mkstemp's eight characters): nothing else is touched;
- it is a regular file (never a link, a folder or a FIFO someone put there);
- the PID its name holds is not a live process: a live one may still rename it. A reused PID only keeps the
  file until it is STALE_AFTER_S old;
- or it is older than STALE_AFTER_S: no write of ralph's takes that long (a few milliseconds and an fsync), so
  this is also how a name without a PID (an older ralph's) goes, and a PID seen from another PID namespace.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

from ralphloop.files.store import TEMP_MARK, TEMP_PREFIX
from ralphloop.words.patterns import lazy

STALE_AFTER_S = 600.0
# ralph's, marked (`.tmp-ralph-<pid>-`), or an earlier ralph's (`.tmp-<pid>-`, `.tmp-`): group 1 the mark
_NAME = lazy(re.escape(TEMP_PREFIX) + f"({re.escape(TEMP_MARK)})?" + r"(?:(\d{1,10})-)?[a-z0-9_]{8}")


def remove_stale_temps(folders: Iterable[str], now: float, *, marked_only: bool = False) -> list[str]:
    """Remove the temporary files of ralph's own that no live writer holds in `folders` (`now`: epoch
    seconds); returns their paths. `marked_only`: only names with ralph's mark, for a folder that holds the
    user's files too (the project's root), where `.tmp-xxxxxxxx` may be theirs."""
    removed: list[str] = []
    for folder in dict.fromkeys(folders):  # a folder named twice is swept once
        for name in _names(folder):
            path = os.path.join(folder, name)
            match = _NAME.fullmatch(name)
            if match is not None and marked_only and not match.group(1):
                continue
            if _stale(path, match, now):
                try:
                    os.unlink(path)
                except OSError:  # gone meanwhile, or not ours to remove: left as it is
                    continue
                removed.append(path)
    return removed


def _names(folder: str) -> list[str]:
    try:
        return [name for name in os.listdir(folder) if name.startswith(TEMP_PREFIX)]
    except OSError:
        return []


def _stale(path: str, match: re.Match[str] | None, now: float) -> bool:
    if match is None:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if now - info.st_mtime >= STALE_AFTER_S:
        return True
    pid = match.group(2)
    return pid is not None and not _alive(int(pid))


def _alive(pid: int) -> bool:
    """Whether `pid` names a running process (another user's counts: it may be a writer; a zombie does not)."""
    if pid <= 0:
        return True  # not a PID a writer has: left to the age rule
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[:1] != [b"Z"]  # killed, not yet waited for
    except OSError:
        return True
