"""The seam between the coordinator and where a loop runs (docs/scale.md): a Launcher starts a loop from its
spec and hands back a LoopHandle to poll and stop. The coordinator assumes nothing else of a child: the branch
is the only channel for its work. LocalProcessLauncher, the first implementation, runs each loop as a child
`ralph run` process in its own process group on this machine."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Protocol

from msgspec import Struct

from ralphloop.processes import reaper
from ralphloop.project.paths import RALPH_DIR, FeaturePaths

REFILL_AFTER_S = 1.0  # a warm process taken is replaced this long after
PARENT_ENV = "RALPH_FLEET_PARENT"  # the coordinator's pid: the child asks to be signalled when it dies


class LoopSpec(Struct, frozen=True):
    """One loop to start: its story, where it works, what it runs (after `ralph`) and its environment."""

    story: str
    worktree: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    slot: int
    log: str  # where the child's own terminal output goes


class LoopHandle(Protocol):
    id: str
    pid: int | None  # the loop's process, where the fleet's records and budget find it (None: not a local one)
    started: float | None  # its start time, so a pid reused later is never taken for it

    def fileno(self) -> int | None:
        """A descriptor that is readable once the loop ended, when the launcher has one (the coordinator waits on
        it); None: it is polled."""
        ...

    def poll(self) -> int | None:
        """The exit code once the loop ended, else None."""
        ...

    def terminate(self) -> None:
        """Ask the loop to stop (as on Ctrl+C: it records its iteration), not waited for."""
        ...

    def stop(self, grace_s: float) -> None:
        """Stop the loop and everything it started; it records its end as on Ctrl+C."""
        ...


class Launcher(Protocol):
    def start(self, loop: LoopSpec) -> LoopHandle: ...

    def close(self) -> None:
        """The run is over: anything kept ready for loops that will not come is let go."""
        ...


class LocalHandle:
    def __init__(self, process: subprocess.Popen[bytes], started: float | None) -> None:
        self.process = process
        self.id = str(process.pid)
        self.pid: int | None = process.pid
        self.started = started  # the process's start time: a pid reused later is never signalled
        self.fd = _pidfd(process.pid)  # readable once it ends: the coordinator wakes at once (Linux 5.3+)
        self.terminated = False

    def fileno(self) -> int | None:
        return self.fd

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is not None and self.fd is not None:
            os.close(self.fd)
            self.fd = None
        return code

    def terminate(self) -> None:
        """SIGTERM to the child ralph, once, not waited for: it stops its agent and writes its records as on Ctrl+C.
        Not to its group: the git command it may be running then would die under it, and the loop would end in an
        error instead of recording its iteration; and a second SIGTERM would be a second Ctrl+C (quit at once)."""
        if self.process.poll() is None and not self.terminated:
            self.terminated = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGTERM)

    def stop(self, grace_s: float) -> None:
        self.terminate()
        if self.process.poll() is not None:
            return
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            reaper.stop([self.process.pid], [self.process.pid], 0.0)
            self.process.wait()


class LocalProcessLauncher:
    """Each loop a `ralph run` of this Python, in its own session (so a signal to its group reaches its agent's
    tools too), told by PARENT_ENV to ask the kernel for SIGTERM when the coordinator dies. `warm` processes are
    kept ready (cli/warm.py: imports done, waiting for their loop), one replaced as soon as one is taken."""

    def __init__(self, ralph: Sequence[str] | None = None, warm: int = 0, agents: str = "") -> None:
        self.ralph = tuple(ralph or (sys.executable, "-m", "ralphloop"))
        self.warm = warm
        self.agents = agents  # the backends a warm process imports ahead (cli/warm.py)
        self.ready: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()  # `ready` is filled by a timer's thread too
        self._refill: threading.Timer | None = None
        self._closed = False
        self._fill()

    def start(self, loop: LoopSpec) -> LocalHandle:
        while True:
            with self._lock:
                process = self.ready.pop(0) if self.ready else None
            if process is None:
                return self._cold(loop)
            if self._hand(process, loop):
                self._fill_later()
                return LocalHandle(process, reaper.start_time(process.pid))

    def close(self) -> None:
        """The warm processes not needed: told so (an empty stdin), and reaped."""
        with self._lock:
            self._closed = True
            if self._refill is not None:
                self._refill.cancel()
        for process in self.ready:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
        for process in self.ready:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.ready = []

    def _fill_later(self) -> None:
        """The warm process taken is replaced once the loops just started have had the cores for their own start
        (on 2 cores, warming at once took a quarter of a second from each: bench/parallel.py)."""
        with self._lock:
            if self._refill is None or not self._refill.is_alive():
                self._refill = threading.Timer(REFILL_AFTER_S, self._fill)
                self._refill.daemon = True
                self._refill.start()

    def _fill(self) -> None:
        with self._lock:
            while len(self.ready) < self.warm and not self._closed:
                self._start_warm()

    def _start_warm(self) -> None:
        self.ready.append(
            subprocess.Popen(
                [sys.executable, "-m", "ralphloop.cli.warm"],
                env={**os.environ, PARENT_ENV: str(os.getpid()), "RALPH_WARM_AGENTS": self.agents},
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )

    def _hand(self, process: subprocess.Popen[bytes], loop: LoopSpec) -> bool:
        """The loop given to a warm process; False when that process is gone (a cold one is started instead)."""
        spec = {"argv": list(loop.argv), "cwd": loop.worktree, "env": dict(loop.env), "log": loop.log}
        try:
            assert process.stdin is not None
            process.stdin.write(json.dumps(spec).encode() + b"\n")
            process.stdin.close()
        except OSError:
            process.wait()
            return False
        return True

    def _cold(self, loop: LoopSpec) -> LocalHandle:
        env = {**os.environ, **loop.env, PARENT_ENV: str(os.getpid())}
        with open(loop.log, "ab") as out:
            process = subprocess.Popen(
                [*self.ralph, *loop.argv],
                cwd=loop.worktree,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return LocalHandle(process, reaper.start_time(process.pid))


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def die_with_parent() -> None:
    """In a child loop: SIGTERM when the coordinator dies (PR_SET_PDEATHSIG), taken like Ctrl+C; if it died
    before this ran, stop at once. Linux only; elsewhere the coordinator's own stop is the only stop."""
    parent = os.environ.get(PARENT_ENV, "")
    if not parent.isdigit():
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):
        os.kill(os.getpid(), signal.SIGTERM)


def child_kept_out(top: str, paths: FeaturePaths, task_file: str) -> frozenset[str]:
    """What a child loop never commits: the task file and progress.txt (its coordinator commits the pass mark and
    the entries once the story is merged, so the task file never conflicts), and .ralph/.gitignore, which every
    loop may extend alike."""
    task = os.path.join(paths.dir, task_file)
    names = (task, paths.progress, os.path.join(paths.project_root, RALPH_DIR, ".gitignore"))
    return frozenset(os.path.relpath(name, top) for name in names)
