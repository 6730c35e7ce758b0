"""The only place that starts agent processes.

Each agent runs in a new session (its own process group), gets its prompt on
stdin, and has its stdout and stderr redacted (secrets masked) and streamed to the
iteration log, the backend's parser and the screen as they arrive.
A timeout or a cancellation stops the whole group: SIGTERM, a grace period, then
SIGKILL, so no grandchild survives the iteration. So does the idle timeout: an agent that prints
nothing, on stdout or stderr, for that long (a CLI that waits out a spent quota in silence) is
timed out too, and its outcome names the idle limit.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from itertools import count

from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import AgentCommand, ProcessOutcome
from ralphloop.core.runner import Launch, OutputHook, ProcessLimits
from ralphloop.processes import reaper
from ralphloop.processes.iteration_log import IterationLog
from ralphloop.words.redact import StreamRedactor, secret_values

_CHUNK = 64 * 1024
_STDERR_TAIL = 4096
# How long to keep reading pipes that something outside the agent's group still holds open.
_DRAIN_LIMIT_S = 2.0

# Every process group started here and still running (agents, hooks in threads, gates): a second Ctrl+C
# kills them all before ralph quits at once, so nothing outlives it.
LIVE_GROUPS: set[int] = set()
_TAGS = count(1)  # a process's tag, when the caller gives none: "<ralph's pid>.<n>"


class LocalRunner:
    """The default runner (core/runner.py): the command as a process group on this machine."""

    name = "local"
    home: str | None = None

    def run(
        self,
        launch: Launch,
        cancel: CancelToken,
        *,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> ProcessOutcome:
        return run_agent_process(
            launch.command,
            cwd=launch.cwd,
            log_path=launch.log_path,
            limits=launch.limits,
            cancel=cancel,
            on_stdout=on_stdout,
            on_output=on_output,
            tag=launch.tag or None,
            on_start=on_start,
        )


def run_agent_process(
    command: AgentCommand,
    *,
    cwd: str,
    log_path: str,
    limits: ProcessLimits,
    cancel: CancelToken,
    on_stdout: Callable[[bytes], None],
    on_output: OutputHook | None = None,
    monotonic: Callable[[], float] = time.monotonic,
    tag: str | None = None,
    on_start: Callable[[int], None] | None = None,
    base_env: Mapping[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> ProcessOutcome:
    """Run one agent to the end (or to its timeout or a cancellation) and say how it ended. `tag` marks the
    process and all it starts (processes/reaper.py); `on_start` hears its PID (the journal records it). It gets
    ralph's environment and the command's, or `base_env` instead of ralph's (a sandbox's allow-list applied); the
    descriptors `pass_fds` names are its too (the sandbox's network, entered)."""
    started = monotonic()
    tag = tag or f"{os.getpid()}.{next(_TAGS)}"
    secrets = secret_values([os.environ, command.env])
    log = IterationLog(log_path, limits.log_max_bytes)
    try:
        with reaper.SPAWNING:  # registered before any reaping can mistake it for an orphan
            proc = subprocess.Popen(
                command.argv,
                cwd=cwd,
                env={**(os.environ if base_env is None else base_env), **command.env, reaper.TAG_VAR: tag},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=pass_fds,
            )
            LIVE_GROUPS.add(proc.pid)
    except OSError as exc:
        log.close()
        reason = "command not found" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
        return ProcessOutcome(
            exit_code=None, duration_s=monotonic() - started, start_error=f"{command.argv[0]}: {reason}"
        )
    cancel.active_pgid = proc.pid
    left: list[int] = []
    try:
        if on_start is not None:
            on_start(proc.pid)
        pump = _Pump(proc, command.stdin, log, cancel, on_stdout, on_output, secrets)
        idle = limits.idle_limit(command)
        ending = pump.run(deadline=started + limits.timeout_s, idle_s=idle, monotonic=monotonic)
        if ending != "exited" or pump.streams_open():
            # Timed out, cancelled, or the agent left something behind that holds its pipes.
            _stop_group(proc, tag, limits.kill_grace_s)
            pump.drain(monotonic() + _DRAIN_LIMIT_S, monotonic)
        exit_code = proc.wait()
        pump.finish()
        # What it left running once it ended (a daemonised grandchild): stopped, and told.
        left = reaper.stop_left(proc.pid, tag, limits.kill_grace_s)
    finally:
        cancel.active_pgid = None
        LIVE_GROUPS.discard(proc.pid)
        pump.close()
        log.close()
    if threading.current_thread() is threading.main_thread():
        reaper.reap_orphans(LIVE_GROUPS)  # orphans that ended on their own, re-parented to ralph
    return ProcessOutcome(
        exit_code=exit_code,
        duration_s=monotonic() - started,
        timed_out=ending in ("timeout", "idle"),
        idle_limit_s=idle if ending == "idle" else None,
        interrupted=ending == "cancelled",
        stdout_bytes=pump.stdout_bytes,
        stderr_tail=pump.stderr_tail.decode("utf-8", "replace"),
        left_running=len(left),
    )


class _Pump:
    """One select loop: feed stdin, read both pipes, notice exit, timeout, silence and cancellation.

    Each pipe is redacted as it is read, and only its redacted form goes on (to the log, the parser, the
    screen): everything ralph keeps of an agent's output is masked once, here."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        stdin: bytes,
        log: IterationLog,
        cancel: CancelToken,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None,
        secrets: list[bytes],
    ) -> None:
        self.proc = proc
        self.log = log
        self.cancel = cancel
        self.on_stdout = on_stdout
        self.on_output = on_output
        self.stdout_bytes = 0
        self.stderr_tail = b""
        self._redactors = {"stdout": StreamRedactor(secrets), "stderr": StreamRedactor(secrets)}
        self._pending = memoryview(stdin)
        self._selector = selectors.DefaultSelector()
        self._exit_fd = _pidfd(proc.pid)
        assert proc.stdin and proc.stdout and proc.stderr
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            os.set_blocking(stream.fileno(), False)
            self._selector.register(stream.fileno(), selectors.EVENT_READ, name)
        os.set_blocking(proc.stdin.fileno(), False)
        if self._pending:
            self._selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
        else:
            proc.stdin.close()
        self._selector.register(cancel.fileno(), selectors.EVENT_READ, "cancel")
        if self._exit_fd is not None:
            self._selector.register(self._exit_fd, selectors.EVENT_READ, "exit")

    def streams_open(self) -> bool:
        return any(key.data in ("stdout", "stderr") for key in self._selector.get_map().values())

    def run(self, *, deadline: float, idle_s: float | None, monotonic: Callable[[], float]) -> str:
        """Pump until the agent exits: 'exited', 'timeout', 'idle' (no output for `idle_s`) or 'cancelled'.

        After 'exited' the pipes may still be open, held by something the agent left behind.
        """
        exited = False
        heard = monotonic()  # the last output read; the start counts, so a process silent from the first is idle
        while not exited:
            if self.cancel.is_set():
                return "cancelled"
            now = monotonic()
            remaining = deadline - now
            if remaining <= 0:
                return "timeout"
            if idle_s is not None:
                quiet_left = heard + idle_s - now
                if quiet_left <= 0:
                    return "idle"
                remaining = min(remaining, quiet_left)
            # Without a pidfd (not Linux) exit is noticed by polling; short naps keep the overhead low.
            wait = remaining if self._exit_fd is not None else min(remaining, 0.005)
            for key, _ in self._selector.select(timeout=wait):
                if key.data == "exit":
                    self._selector.unregister(key.fd)
                    exited = True
                elif key.data == "stdin":
                    self._feed_stdin()
                elif key.data == "cancel":
                    self.cancel.quiet()  # a signal's wake-up, not a cancellation: the next turn says which
                elif key.data in ("stdout", "stderr") and self._read(key.fd, key.data):
                    heard = monotonic()
            if self._exit_fd is None and self.proc.poll() is not None:
                exited = True
        self._read_available()
        return "exited"

    def _read_available(self) -> None:
        """Read everything already in the pipes, without waiting for writers that are still alive."""
        while self.streams_open():
            ready = [key for key, _ in self._selector.select(timeout=0) if key.data in ("stdout", "stderr")]
            if not ready:
                return
            for key in ready:
                self._read(key.fd, key.data)

    def drain(self, until: float, monotonic: Callable[[], float]) -> None:
        """Read what is left after the group is gone, for a bounded time."""
        for key in list(self._selector.get_map().values()):
            if key.data not in ("stdout", "stderr"):
                self._selector.unregister(key.fd)
        while self.streams_open():
            remaining = until - monotonic()
            if remaining <= 0:
                return
            for key, _ in self._selector.select(timeout=remaining):
                if key.data in ("stdout", "stderr"):
                    self._read(key.fd, key.data)

    def _feed_stdin(self) -> None:
        assert self.proc.stdin
        fd = self.proc.stdin.fileno()
        try:
            written = os.write(fd, self._pending[:_CHUNK])
        except BlockingIOError:
            return
        except (BrokenPipeError, OSError):
            written = len(self._pending)  # the agent stopped reading; it may still print something
        self._pending = self._pending[written:]
        if not self._pending:
            self._selector.unregister(fd)
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def _read(self, fd: int, name: str) -> bool:
        """Read what the pipe holds; whether there was any output (not the pipe's end)."""
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._selector.unregister(fd)
            return False
        if name == "stdout":
            self.stdout_bytes += len(data)
        self._pass_on(name, self._redactors[name].feed(data))
        return True

    def _pass_on(self, name: str, clean: bytes) -> None:
        if not clean:
            return
        if name == "stdout":
            self.log.stdout(clean)
            self.on_stdout(clean)
        else:
            self.stderr_tail = (self.stderr_tail + clean)[-_STDERR_TAIL:]
            self.log.stderr(clean)
        if self.on_output is not None:
            self.on_output(name, clean)

    def finish(self) -> None:
        """What the redactors still hold (the ends of the last words), once both pipes are done."""
        for name, redactor in self._redactors.items():
            self._pass_on(name, redactor.flush())

    def close(self) -> None:
        self._selector.close()
        if self._exit_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._exit_fd)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def _stop_group(proc: subprocess.Popen[bytes], tag: str, grace_s: float) -> None:
    """SIGTERM the agent's group, its descendants and whatever carries its tag, wait up to `grace_s`, then
    SIGKILL what is left."""
    alive = proc.poll() is None
    targets = [*reaper.descendants(proc.pid)] if alive else []
    targets += [pid for pid in reaper.survivors(proc.pid, tag) if pid not in targets]
    reaper.stop(targets, [proc.pid], grace_s)


def kill_group_now(pgid: int) -> None:
    """SIGKILL a whole group at once (the second Ctrl+C)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
