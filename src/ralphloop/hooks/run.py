"""Running one hook or gate: `/bin/sh -c` through the local runner (processes/local.py), so it gets its own process
group, a timeout that stops the whole group, masked secrets in its log, and cancellation.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Mapping

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.core.cancel import CancelToken
from ralphloop.core.hook_spec import CommandSpec
from ralphloop.core.protocols import AgentCommand
from ralphloop.core.runner import Launch, ProcessLimits, Runner
from ralphloop.hooks.quoting import quote_variables
from ralphloop.hooks.variables import HOOK_VARIABLES
from ralphloop.processes.local import LocalRunner
from ralphloop.words.textsafe import strip_terminal_controls

# EX_TEMPFAIL from sysexits.h: a code no ordinary failure (1, 2, 126, 127, signals) collides with.
VERIFY_FAILED = 75

_TAIL_LINES = 40
_TAIL_BYTES = 4096


class CommandRun(Struct, frozen=True):
    """How one hook or gate ended, with the end of its log for messages and the next prompt."""

    name: str
    exit_code: int | None
    duration_s: float
    log_path: str
    tail: str = ""  # the log's last lines (at most 40 lines / 4 KiB), terminal escapes stripped
    timed_out: bool = False
    interrupted: bool = False
    start_error: str | None = None

    @property
    def ok(self) -> bool:
        """It ran to the end and exited 0."""
        return self.exit_code == 0 and not self.timed_out and not self.interrupted

    @property
    def verify_failed(self) -> bool:
        """A post_iteration hook said the iteration's work does not hold up."""
        return self.exit_code == VERIFY_FAILED

    def summary(self) -> str:
        """One line: how it ended and how long it took."""
        took = _seconds(self.duration_s)
        if self.start_error is not None:
            return f"{self.name}: could not start: {self.start_error}"
        if self.timed_out:
            return f"{self.name}: timed out after {took}"
        if self.interrupted:
            return f"{self.name}: interrupted after {took}"
        if self.exit_code == 0:
            return f"{self.name}: passed ({took})"
        if self.exit_code is not None and self.exit_code < 0:
            return f"{self.name}: killed by {_signal_name(-self.exit_code)} after {took}"
        meaning = " (verification failed)" if self.verify_failed else ""
        return f"{self.name}: exit {self.exit_code}{meaning} after {took}"


def run_shell(
    spec: CommandSpec,
    *,
    cwd: str,
    env: Mapping[str, str],
    log_path: str,
    limits: ProcessLimits,
    cancel: CancelToken,
    stdin: bytes = b"",
) -> CommandRun:
    """Run `spec.command` with `/bin/sh -c`, `env` added to the environment; a bare reference to any variable
    ralph sets (`env`'s names, the hook variables among them) is quoted, so a value is always one word."""
    names = tuple(dict.fromkeys((*HOOK_VARIABLES, *(name for name in env if name.isidentifier()))))
    command = AgentCommand(argv=("/bin/sh", "-c", quote_variables(spec.command, names)), env=dict(env), stdin=stdin)
    if spec.timeout_s is not None:
        limits = replace(limits, timeout_s=spec.timeout_s)
    # The idle limit is for agents that wait in silence: a test suite may print nothing for minutes.
    limits = replace(limits, idle_timeout_s=0.0)
    return run_command(spec.name, command, cwd=cwd, log_path=log_path, limits=limits, cancel=cancel)


def run_command(
    name: str,
    command: AgentCommand,
    *,
    cwd: str,
    log_path: str,
    limits: ProcessLimits,
    cancel: CancelToken,
    runner: Runner | None = None,
) -> CommandRun:
    """Run an argv the caller built (a prompt hook's agent, through the loop's runner), logging its output to
    `log_path`; a command of the user's own runs as a local process."""
    problem = _cannot_start(command, cwd)
    if problem is not None:
        return CommandRun(name, None, 0.0, log_path, start_error=problem)
    try:
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        # The log is appended to: the tail must come from this run only, not from an earlier one.
        start = _size(log_path)
        launch = Launch(command, cwd, log_path, limits)
        outcome = (runner or LocalRunner()).run(launch, cancel, on_stdout=_ignore)
    except OSError as exc:
        return CommandRun(name, None, 0.0, log_path, start_error=f"{log_path}: {exc.strerror or exc}")
    return CommandRun(
        name=name,
        exit_code=outcome.exit_code,
        duration_s=outcome.duration_s,
        log_path=log_path,
        tail=_read_tail(log_path, start),
        timed_out=outcome.timed_out,
        interrupted=outcome.interrupted,
        start_error=outcome.start_error,
    )


def _ignore(_data: bytes) -> None:
    """Output goes to the log only: nothing streams it to a parser."""


def _cannot_start(command: AgentCommand, cwd: str) -> str | None:
    # Said here because Popen would blame the command ("command not found") for a missing folder,
    # and raise ValueError rather than OSError for a NUL in an argument or a variable.
    if not os.path.isdir(cwd):
        return f"{cwd}: no such folder"
    texts = [*command.argv, *command.env.keys(), *command.env.values()]
    if any("\0" in text for text in texts):
        return "a NUL character in the command or its environment"
    bad_names = [name for name in command.env if not name or "=" in name]
    if bad_names:
        return f"not an environment variable name: {bad_names[0]!r}"
    return None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _read_tail(path: str, start: int) -> str:
    """The last lines the run wrote after `start`, bounded in lines and bytes, safe to show."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        begin = max(start, info.st_size - _TAIL_BYTES)
        data = os.pread(fd, info.st_size - begin, begin)
    except OSError:
        return ""
    finally:
        os.close(fd)
    lines = strip_terminal_controls(data.decode("utf-8", "replace")).split("\n")
    if begin > start and len(lines) > 1:
        lines = lines[1:]  # cut by the byte bound
    if lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines[-_TAIL_LINES:])


def _seconds(duration_s: float) -> str:
    return f"{duration_s:.1f}s" if duration_s < 10 else f"{duration_s:.0f}s"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
