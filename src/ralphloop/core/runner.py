"""The execution seam: how the engine, the hooks and the merge resolver start a command and hear it.

A runner starts one command with its limits, streams what it prints to the caller as it arrives, and says how
it ended. The engine knows nothing else of processes: the local runner (processes/local.py, a process group on
this machine) is the default; a replay runner (processes/replay.py) plays recorded CLI output back in-process,
so the engine's decisions are tested without a process; a sandboxed runner (the same process in a box) and a
remote one (the command on another machine, its output streamed back) plug in here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from msgspec import Struct

from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import AgentCommand, ProcessOutcome

# (stream, data): "stdout" or "stderr" and what arrived on it, redacted
OutputHook = Callable[[str, bytes], None]


class ProcessLimits(Struct, frozen=True):
    """Time and size limits for one command."""

    timeout_s: float
    kill_grace_s: float = 5.0
    log_max_bytes: int = 64 * 1024 * 1024
    # No output for this long ends the process like a timeout. None: the command's own default
    # (AgentCommand.idle_timeout_s, a backend's); 0: no idle limit, whatever the command asks.
    idle_timeout_s: float | None = None

    def idle_limit(self, command: AgentCommand) -> float | None:
        """The idle limit for `command`: the configured one when set, else the backend's; None for none."""
        chosen = command.idle_timeout_s if self.idle_timeout_s is None else self.idle_timeout_s
        return chosen if chosen else None


class Launch(Struct, frozen=True):
    """One command to run: what, where, within which limits, logged where, and the tag that finds whatever it
    leaves running (processes/reaper.py)."""

    command: AgentCommand
    cwd: str
    log_path: str
    limits: ProcessLimits
    tag: str = ""  # "": the runner makes one


class Runner(Protocol):
    """Starts a command, streams its output to the hooks as it arrives, and reports its outcome."""

    name: str  # "local", "replay", ... (shown by --dry-run)
    home: str | None  # the agent's own home in a sandbox (processes/sandbox.py); None: it runs as the user

    def run(
        self,
        launch: Launch,
        cancel: CancelToken,
        *,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> ProcessOutcome:
        """Run `launch` to its end, its timeout or `cancel`. `on_stdout` gets stdout as it arrives (the backend's
        parser), `on_output` both streams (the screen), `on_start` the process's id (0: no process here)."""
        ...
