"""User commands around the loop: lifecycle hooks, quality gates, and the threads that run them in the background.

Hook values (the transcript path, the sprint id ...) reach a command only as environment variables, and
every unquoted reference to them is rewritten to `"${NAME}"`: no value can inject shell, and none is split
into words or expanded as a glob. Each command runs through `run_agent_process`, so it gets its own
process group, a timeout that stops the whole group, masked secrets in its log, and cancellation.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import signal
import stat
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ralphloop.cancel import CancelToken
from ralphloop.durations import parse_duration
from ralphloop.process import ProcessLimits, run_agent_process
from ralphloop.protocols import AgentCommand
from ralphloop.textsafe import strip_terminal_controls

HOOK_VARIABLES = ("ITERATION_TRANSCRIPT", "SPRINT_ID", "ITERATION", "PHASE_ID")
LIFECYCLE_EVENTS = ("pre_run", "pre_iteration", "post_iteration", "on_complete", "on_error", "on_halt")
# EX_TEMPFAIL from sysexits.h: a code no ordinary failure (1, 2, 126, 127, signals) collides with.
VERIFY_FAILED = 75

_TAIL_LINES = 40
_TAIL_BYTES = 4096
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")
# `<<WORD` or `<<-WORD`; the word may be quoted or escaped, which only says the body is not expanded.
_HEREDOC = re.compile(r"<<(-?)[ \t]*((?:[^\s;&|<>()]|\\.)+)")
_DURATION_HINT = "expected a duration such as 15, 90s, 15m or 1h"

# ---------------------------------------------------------------- variables


@dataclass(frozen=True, slots=True)
class HookVars:
    """The values a hook can refer to, for one iteration."""

    transcript: str  # path of the iteration's log
    sprint_id: str
    iteration: int
    phase_id: str

    def values(self) -> dict[str, str]:
        """The values by their variable names, as the environment of a hook."""
        return {
            "ITERATION_TRANSCRIPT": self.transcript,
            "SPRINT_ID": self.sprint_id,
            "ITERATION": str(self.iteration),
            "PHASE_ID": self.phase_id,
        }


@functools.lru_cache(maxsize=32)
def _reference_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    for name in names:
        if not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"not a shell variable name: {name!r}")
    # Longest first, and a name must not be followed by an identifier character: $ITERATION is not
    # the start of $ITERATION_TRANSCRIPT or $ITERATIONS.
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"\$(?:\{{(?P<braced>{alternatives})\}}|(?P<bare>{alternatives})(?![A-Za-z0-9_]))")


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`text` with `$NAME` and `${NAME}` replaced by `values[NAME]`, in one pass (for prompts, never a shell)."""
    if not values:
        return text
    pattern = _reference_pattern(tuple(values))
    return pattern.sub(lambda match: values[match.group("braced") or match.group("bare")], text)


def quote_variables(command: str, names: Iterable[str] = HOOK_VARIABLES) -> str:
    """`command` with every unquoted `$NAME` / `${NAME}` of `names` written as `"${NAME}"`.

    Quoted, escaped, arithmetic and here-document references are left as they are: there the shell
    already neither splits nor globs, and added quotes would change the text or break the syntax.
    """
    wanted = tuple(names)
    if not wanted:
        return command
    return _Quoter(command, _reference_pattern(wanted)).run()


@dataclass(slots=True)
class _Frame:
    kind: str  # top | sub ($( )) | backtick | arith ($(( ))) | dq ("...")
    depth: int = 0  # parentheses opened inside this frame and not yet closed


class _Quoter:
    """A small POSIX shell scanner that knows, at each `$`, whether a reference there would be split.

    It follows quotes, backslashes, comments, here-documents and nested `$( )`, backquotes and `$(( ))`:
    inside double quotes a command substitution starts an unquoted context of its own.
    """

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text = text
        self.pattern = pattern
        self.pos = 0
        self.out: list[str] = []
        self.stack = [_Frame("top")]
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs), bodies not yet read

    def run(self) -> str:
        while self.pos < len(self.text):
            frame = self.stack[-1]
            if frame.kind == "dq":
                self._double_quoted()
            else:
                self._code(frame)
        return "".join(self.out)

    def _take(self, count: int) -> None:
        self.out.append(self.text[self.pos : self.pos + count])
        self.pos += count

    def _take_until(self, end: int) -> None:
        self._take((len(self.text) if end < 0 else end) - self.pos)

    def _code(self, frame: _Frame) -> None:
        text, pos = self.text, self.pos
        char = text[pos]
        if char == "\\":
            self._take(2)
        elif char == "'" and frame.kind != "arith":
            end = text.find("'", pos + 1)
            self._take_until(end + 1 if end >= 0 else -1)
        elif char == '"':
            self.stack.append(_Frame("dq"))
            self._take(1)
        elif char == "$":
            self._dollar(quote=frame.kind != "arith")
        elif char == "`":
            self._backquote(frame)
        elif char == "#" and (pos == 0 or text[pos - 1] in " \t\n;&|()"):
            self._take_until(text.find("\n", pos))
        elif text.startswith("<<", pos) and not text.startswith("<<<", pos) and frame.kind != "arith":
            self._heredoc_operator()
        elif char == "\n" and self.heredocs:
            self._take(1)
            self._heredoc_bodies()
        elif char in "()":
            self._parenthesis(frame, char)
        else:
            self._take(1)

    def _double_quoted(self) -> None:
        char = self.text[self.pos]
        if char == "\\":
            # Inside double quotes a backslash escapes only these; elsewhere it is itself.
            self._take(2 if self.text[self.pos + 1 : self.pos + 2] in ("\\", '"', "$", "`", "\n") else 1)
        elif char == '"':
            self.stack.pop()
            self._take(1)
        elif char == "$":
            self._dollar(quote=False)
        elif char == "`":
            self._backquote(self.stack[-1])
        else:
            self._take(1)

    def _dollar(self, *, quote: bool) -> None:
        text, pos = self.text, self.pos
        if text.startswith("$((", pos):
            self.stack.append(_Frame("arith"))
            self._take(3)
        elif text.startswith("$(", pos):
            self.stack.append(_Frame("sub"))
            self._take(2)
        elif match := self.pattern.match(text, pos):
            name = match.group("braced") or match.group("bare")
            self.out.append(f'"${{{name}}}"' if quote else match.group(0))
            self.pos = match.end()
        else:
            # `$$NAME` is the shell's PID followed by text: both dollars go together.
            self._take(2 if text.startswith("$$", pos) else 1)

    def _backquote(self, frame: _Frame) -> None:
        if frame.kind == "backtick":
            self.stack.pop()
        else:
            self.stack.append(_Frame("backtick"))
        self._take(1)

    def _parenthesis(self, frame: _Frame, char: str) -> None:
        if char == "(":
            frame.depth += 1
        elif frame.depth:
            frame.depth -= 1
        elif frame.kind == "sub":
            self.stack.pop()
        elif frame.kind == "arith" and self.text.startswith("))", self.pos):
            self.stack.pop()
            self._take(2)
            return
        self._take(1)

    def _heredoc_operator(self) -> None:
        match = _HEREDOC.match(self.text, self.pos)
        if match is None:
            self._take(2)
            return
        # The body is copied untouched whether the delimiter is quoted or not: a here-document is never split.
        delimiter = re.sub(r"\\(.)", r"\1", match.group(2)).replace("'", "").replace('"', "")
        self.heredocs.append((delimiter, match.group(1) == "-"))
        self._take(match.end() - self.pos)

    def _heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self.heredocs:
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                line = self.text[self.pos : len(self.text) if end < 0 else end]
                self._take_until(end + 1 if end >= 0 else -1)
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.heredocs.clear()


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One user command: a name for logs and messages, a shell command, and its own timeout."""

    name: str
    command: str
    timeout_s: float | None = None  # None: the caller's default


@dataclass(frozen=True, slots=True)
class LifecycleHooks:
    """The `hooks:` section: commands by lifecycle event."""

    commands: Mapping[str, tuple[CommandSpec, ...]] = field(default_factory=lambda: MappingProxyType({}))
    timeout_s: float | None = None

    def for_event(self, event: str) -> tuple[CommandSpec, ...]:
        """The commands for `event`, in order; () when it has none."""
        if event not in LIFECYCLE_EVENTS:
            raise ValueError(f"not a lifecycle event: {event!r}")
        return self.commands.get(event, ())

    @property
    def any(self) -> bool:
        return bool(self.commands)


def parse_hooks(value: Any) -> LifecycleHooks:
    """The `hooks:` section as YAML loaded it; ValueError naming the key when it is invalid."""
    if value is None:
        return LifecycleHooks()
    if not isinstance(value, Mapping):
        raise ValueError("hooks: expected a mapping of event to command(s)")
    timeout_s = _duration(value["timeout"], "hooks.timeout") if "timeout" in value else None
    for key in value:
        if key != "timeout" and key not in LIFECYCLE_EVENTS:
            raise ValueError(f"hooks.{key}: not one of {', '.join(LIFECYCLE_EVENTS)} (or timeout)")
    commands: dict[str, tuple[CommandSpec, ...]] = {}
    for event in LIFECYCLE_EVENTS:
        texts = _command_list(value.get(event), f"hooks.{event}")
        # The section's timeout stays on LifecycleHooks, not on each spec: a later config file that only
        # changes `timeout` then applies to the hooks an earlier file defined.
        specs = tuple(CommandSpec(event if n == 1 else f"{event}#{n}", text) for n, text in enumerate(texts, 1))
        if specs:
            commands[event] = specs
    return LifecycleHooks(MappingProxyType(commands), timeout_s)


def parse_quality_checks(value: Any) -> tuple[CommandSpec, ...]:
    """The `quality_checks:` section (name: command, or name: {command, timeout}), in the order written."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ValueError("quality_checks: expected a mapping of name to command")
    specs: list[CommandSpec] = []
    log_names: dict[str, str] = {}
    for name, entry in value.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"quality_checks: a check's name must be a non-empty string, not {name!r}")
        key = f"quality_checks.{name}"
        specs.append(_quality_check(name, entry, key))
        # Two names that differ only in characters a file name cannot hold would write into one log.
        other = log_names.setdefault(safe_name(name), name)
        if other != name:
            raise ValueError(f"{key}: its log would be the same file as {other!r}'s; rename one")
    return tuple(specs)


def _quality_check(name: str, entry: Any, key: str) -> CommandSpec:
    if isinstance(entry, str):
        return CommandSpec(name, _command(entry, key))
    if not isinstance(entry, Mapping):
        raise ValueError(f"{key}: expected a command or a mapping with command and timeout")
    unknown = [str(option) for option in entry if option not in ("command", "timeout")]
    if unknown:
        raise ValueError(f"{key}.{unknown[0]}: unknown key (use command, timeout)")
    if "command" not in entry:
        raise ValueError(f"{key}.command: missing")
    timeout_s = _duration(entry["timeout"], f"{key}.timeout") if "timeout" in entry else None
    return CommandSpec(name, _command(entry["command"], f"{key}.command"), timeout_s)


def _command_list(value: Any, key: str) -> list[str]:
    # An event left empty (`pre_run:` with its commands commented out) has no commands, like an absent one.
    if value is None:
        return []
    if isinstance(value, str):
        return [_command(value, key)]
    if isinstance(value, list):
        return [_command(item, f"{key}[{n}]") for n, item in enumerate(value)]
    raise ValueError(f"{key}: expected a command or a list of commands")


def _command(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected a command string")
    if not value.strip():
        raise ValueError(f"{key}: empty command")
    if "\0" in value:
        raise ValueError(f"{key}: a command cannot hold a NUL character")
    return value


def _duration(value: Any, key: str) -> float:
    # The same reading as the rest of the config: a bare number is minutes.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{key}: {_DURATION_HINT}")
    try:
        return parse_duration(str(value))
    except ValueError:
        raise ValueError(f"{key}: {value!r} is not a duration (use 15, 90s, 15m or 1h)") from None


# ---------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class CommandRun:
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
        limits = dataclasses.replace(limits, timeout_s=spec.timeout_s)
    return run_command(spec.name, command, cwd=cwd, log_path=log_path, limits=limits, cancel=cancel)


def run_command(
    name: str, command: AgentCommand, *, cwd: str, log_path: str, limits: ProcessLimits, cancel: CancelToken
) -> CommandRun:
    """Run an argv the caller built (a prompt hook's agent), logging its output to `log_path`."""
    problem = _cannot_start(command, cwd)
    if problem is not None:
        return CommandRun(name, None, 0.0, log_path, start_error=problem)
    try:
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        # The log is appended to: the tail must come from this run only, not from an earlier one.
        start = _size(log_path)
        outcome = run_agent_process(
            command, cwd=cwd, log_path=log_path, limits=limits, cancel=cancel, on_stdout=_ignore
        )
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


def run_gates(
    gates: Sequence[CommandSpec],
    *,
    cwd: str,
    env: Mapping[str, str],
    logs_dir: str,
    iteration: int,
    limits: ProcessLimits,
    cancel: CancelToken,
) -> tuple[CommandRun, ...]:
    """Run every gate in order, failing or not, so the agent hears of every failure; stop only when cancelled."""
    runs: list[CommandRun] = []
    for gate in gates:
        if cancel.is_set():
            break
        log_path = os.path.join(logs_dir, f"gate-{safe_name(gate.name)}-{iteration}.log")
        runs.append(run_shell(gate, cwd=cwd, env=env, log_path=log_path, limits=limits, cancel=cancel))
    return tuple(runs)


def safe_name(name: str) -> str:
    """`name` as part of a file name: characters other than letters, digits, `.`, `_` and `-` become `-`."""
    return _UNSAFE_IN_FILE_NAME.sub("-", name)


class Background:
    """Commands running in threads while the loop goes on (per-iteration hooks with parallel: true)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._finished: list[tuple[Hashable, CommandRun]] = []
        self._running = 0
        # Its own token: stopping background work must not depend on (or trip) the loop's Ctrl+C token.
        self._cancel: CancelToken | None = None

    def start(self, key: Hashable, job: Callable[[CancelToken], CommandRun]) -> None:
        """Run `job` in a daemon thread; it gets the token that `stop(cancel=True)` sets."""
        if self._cancel is None:
            self._cancel = CancelToken()
        token = self._cancel
        with self._lock:
            self._running += 1
        thread = threading.Thread(target=self._work, args=(key, job, token), name=f"ralph-hook-{key}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self, key: Hashable, job: Callable[[CancelToken], CommandRun], token: CancelToken) -> None:
        started = time.monotonic()
        try:
            run = job(token)
        except Exception as exc:  # a broken job is reported as a failed run, never lost with its thread
            run = CommandRun(
                name=str(key),
                exit_code=None,
                duration_s=time.monotonic() - started,
                log_path="",
                start_error=f"{type(exc).__name__}: {exc}",
            )
        with self._lock:
            self._finished.append((key, run))
            self._running -= 1

    def collect(self) -> list[tuple[Hashable, CommandRun]]:
        """The runs finished since the last collect, without waiting for the others."""
        with self._lock:
            finished, self._finished = self._finished, []
        self._threads = [thread for thread in self._threads if thread.is_alive()]
        return finished

    @property
    def running(self) -> int:
        with self._lock:
            return self._running

    def stop(self, *, cancel: bool) -> list[tuple[Hashable, CommandRun]]:
        """Wait for every job (after stopping their process groups when `cancel`); return what finished."""
        token = self._cancel
        if cancel and token is not None:
            token.set()
        for thread in self._threads:
            thread.join()
        self._threads = []
        # A set token would cancel every later job at once: the next start gets a fresh one.
        if token is not None:
            token.close()
            self._cancel = None
        return self.collect()


# ---------------------------------------------------------------- helpers


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
