"""What the processes ralph starts leave behind, found and stopped.

Every agent and hook process gets a tag in its environment (`RALPH_PROCESS_TAG`), which its children and
their children inherit. ralph makes itself a child subreaper, so a grandchild that daemonises (setsid, a
double fork) is re-parented to ralph rather than to init: when the agent exits, what carries its tag among
ralph's descendants is what it left running, and is stopped. After ralph itself was killed, the next run
finds them anywhere by the same tag (`tagged_anywhere`): the journal names the tag.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable

TAG_VAR = "RALPH_PROCESS_TAG"
_PR_SET_CHILD_SUBREAPER = 36
# Held around a spawn and its registration, and around reaping: an orphan is reaped only when it is
# sure not to be a child some thread is about to wait for.
SPAWNING = threading.Lock()
# Linux keeps each thread's children in /proc (CONFIG_PROC_CHILDREN); elsewhere psutil walks the table.
_CHILD_LISTS = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
_PROC = os.path.exists("/proc/self/stat")


def iteration_tag(run_id: str, number: int) -> str:
    """The tag of iteration `number`'s agent in run `run_id`: unique across runs, known to the journal."""
    return f"{run_id}#{number}"


def left_running_note(count: int) -> list[str]:
    """The note an iteration records when its agent left processes running (ralph stopped them)."""
    return [f"the agent left {count} process(es) running after it ended; ralph stopped them"] if count else []


def become_subreaper() -> bool:
    """Make ralph the reaper of its descendants' orphans (Linux); False where the system has no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def is_subreaper() -> bool:
    """Whether ralph is a child subreaper now (it is, during `ralph run`, on Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        return int(libc.prctl(37, ctypes.byref(flag), 0, 0, 0)) == 0 and flag.value == 1
    except (OSError, AttributeError):
        return False


def tag_of(pid: int, name: str = TAG_VAR) -> str | None:
    """The tag in a process's environment (or another variable `name`); None when it has none or cannot be read
    (gone, a zombie, not ours)."""
    if not _PROC:
        import psutil

        try:
            return psutil.Process(pid).environ().get(name)
        except psutil.Error:
            return None
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:
        return None
    key = name.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(key):
            return item[len(key) :].decode("utf-8", "replace")
    return None


def descendants(pid: int | None = None) -> list[int]:
    """Every descendant of `pid` (ralph by default), from the kernel's child lists; psutil where there are none."""
    root = os.getpid() if pid is None else pid
    if not _CHILD_LISTS:
        return _descendants_psutil(root)
    found: list[int] = []
    todo = [root]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


def _children(pid: int) -> list[int]:
    """`pid`'s children, from every one of its threads' lists (an orphan goes to any thread of its reaper)."""
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for task in tasks:
        with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
            kids += [int(word) for word in handle.read().split()]
    return kids


def _descendants_psutil(pid: int) -> list[int]:
    import psutil

    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def survivors(leader: int, tag: str) -> list[int]:
    """What the process `leader` (an agent, a hook) left running: ralph's descendants that carry its tag or
    sit in its process group. Untagged strangers (ralph's own git, a hook's child) are never taken."""
    found = []
    for pid in descendants():
        if pid == leader:
            continue
        if tag_of(pid) == tag or _pgid(pid) == leader:
            found.append(pid)
    return found


def tagged_anywhere(tag: str, name: str = TAG_VAR) -> list[int]:
    """Every process on the system (that ralph may read) carrying `tag` (in `name`): what a killed run left running."""
    me = os.getpid()
    return [pid for pid in _all_pids() if pid != me and tag_of(pid, name) == tag]


def stop(pids: Iterable[int], groups: Iterable[int], grace_s: float) -> list[int]:
    """SIGTERM every process in `pids` and every group in `groups`, wait up to `grace_s`, SIGKILL what is
    left; the ones that were ralph's own children are reaped. Returns the processes that had to be stopped."""
    targets = [pid for pid in pids if _running(pid)]
    group_list = [pgid for pgid in groups if _group_running(pgid)]
    if not targets and not group_list:
        return []
    _send(targets, group_list, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _any_running(targets, group_list):
        _reap(targets)
        time.sleep(0.02)
    if _any_running(targets, group_list):
        _send(targets, group_list, signal.SIGKILL)
        until = time.monotonic() + 5.0
        while time.monotonic() < until and _any_running(targets, group_list):
            _reap(targets)
            time.sleep(0.01)
    _reap(targets)
    return targets


def stop_left(leader: int, tag: str, grace_s: float) -> list[int]:
    """What `leader` left running, stopped, then looked for again until a look finds nothing: a process stopped
    while it daemonises (fork, setsid, fork) may have started its child between the look and the signal, and
    that child, re-parented to ralph, is found by the next look (found by the chaos suite: 1 in ~100 kills)."""
    stopped: list[int] = []
    for _ in range(20):  # each round stops a generation; a chain longer than this is not a daemon's
        found = [pid for pid in survivors(leader, tag) if pid not in stopped]
        done = stop(found, [leader], grace_s)
        if not done:
            break
        stopped += done
    return stopped


def reap_orphans(owned: Iterable[int]) -> None:
    """Reap zombie children of ralph that no thread waits for: orphans re-parented to it that ended on their
    own. `owned` are the children some Popen waits for (never stolen from it)."""
    skip = set(owned)
    with SPAWNING:
        for pid in _children(os.getpid()) if _CHILD_LISTS else []:
            if pid not in skip and _state(pid) == "Z":
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)


def _send(pids: list[int], groups: list[int], signum: signal.Signals) -> None:
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _reap(pids: list[int]) -> None:
    parent = os.getpid()
    for pid in pids:
        if _state(pid) == "Z" and _ppid(pid) == parent:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _any_running(pids: list[int], groups: list[int]) -> bool:
    return any(_running(pid) for pid in pids) or any(_group_running(pgid) for pgid in groups)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan stays a zombie until its parent reaps it)."""
    state = _state(pid)
    return state is not None and state not in ("Z", "X")


def _group_running(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(_pgid(pid) == pgid and _running(pid) for pid in _all_pids())


def _all_pids() -> list[int]:
    if not _PROC:
        import psutil

        return list(psutil.pids())
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (which may hold spaces and parentheses)."""
    if not _PROC:
        return _stat_psutil(pid)
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].decode("ascii", "replace").split()


def _stat_psutil(pid: int) -> list[str] | None:
    """The fields _stat reads (state, ppid, pgid), where there is no /proc."""
    import psutil

    try:
        process = psutil.Process(pid)
        state = "Z" if process.status() == psutil.STATUS_ZOMBIE else "R"
        return [state, str(process.ppid()), str(os.getpgid(pid))]
    except (psutil.Error, OSError):
        return None


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def _ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _pgid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[2]) if fields else None


def start_time(pid: int) -> int | None:
    """The process's start, in clock ticks since boot (Linux): with the PID, it names one process for ever."""
    fields = _stat(pid) if _PROC else None
    return int(fields[19]) if fields and len(fields) > 19 else None
