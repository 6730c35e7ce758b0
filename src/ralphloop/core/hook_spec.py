"""What a hook is: the values config and SPRINT.yaml are read into, and the names their logs get."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from msgspec import Struct, field

LIFECYCLE_EVENTS = ("pre_run", "pre_iteration", "post_iteration", "on_complete", "on_error", "on_halt")

_UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class HookEnd(Struct, frozen=True):
    """How a per-iteration hook ended, as its task format records it."""

    ok: bool
    exit_code: int | None  # None: it timed out, was interrupted or could not start


class CommandSpec(Struct, frozen=True):
    """One user command: a name for logs and messages, a shell command, and its own timeout."""

    name: str
    command: str
    timeout_s: float | None = None  # None: the caller's default


class LifecycleHooks(Struct, frozen=True):
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
        """Some event has a command."""
        return bool(self.commands)


class HookSpec(Struct, frozen=True):
    """One per-iteration hook: run the agent with a prompt, or run a command (ours), every iteration."""

    id: str
    kind: str  # prompt | command
    body: str  # the prompt, or the shell command
    parallel: bool = True
    enabled: bool = True
    workflow: str | None = None  # the `workflow:` reference it was resolved from


def safe_name(name: str) -> str:
    """`name` as part of a file name: characters other than letters, digits, `.`, `_` and `-` become `-`."""
    return _UNSAFE_IN_FILE_NAME.sub("-", name)
