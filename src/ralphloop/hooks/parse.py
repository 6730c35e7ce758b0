"""The `hooks:` and `quality_checks:` config sections, read into CommandSpec values; ValueError names the key."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ralphloop.core.hook_spec import LIFECYCLE_EVENTS, CommandSpec, LifecycleHooks, safe_name
from ralphloop.words.durations import parse_duration

_DURATION_HINT = "expected a duration such as 15, 90s, 15m or 1h"


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
