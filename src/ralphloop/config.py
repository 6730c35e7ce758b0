"""Layered settings with provenance: defaults < ~/.ralph/config.yaml < .ralph/config.yaml < env < flags.

Config files are data (YAML safe loader), never code. Each value remembers where it
came from, so an error or `--dry-run` can say "-t/--timeout" or ".ralph/config.yaml: defaults.timeout_minutes".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ralphloop import config_values as values
from ralphloop.errors import RalphError
from ralphloop.hooks.parse import parse_hooks, parse_quality_checks
from ralphloop.hooks.spec import CommandSpec, LifecycleHooks
from ralphloop.notify import DEFAULT_EVENTS
from ralphloop.paths import RALPH_DIR, display_path, ralph_home

CONFIG_NAME = "config.yaml"
Converter = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything `ralph run` needs to know, resolved."""

    max_iterations: int | None
    timeout_s: float
    rate_limit_per_hour: int
    agent: str
    agent_command: str | None
    scripted_script: str | None
    progress_bytes: int
    kill_grace_s: float
    log_max_bytes: int
    completion: str
    blocked_threshold: int
    max_retries: int
    no_progress_threshold: int
    same_error_threshold: int
    failure_threshold: int
    permission_denial_threshold: int
    cooldown_s: float | None
    usage_policy: str | None
    usage_pause_at: float | None
    usage_margin_s: float
    usage_fallback_wait_s: float
    max_cost_usd: float | None
    max_tokens: int | None
    max_runtime_s: float | None
    model: str | None
    poorman: bool
    rate_account: str | None
    claude_command: str | None
    skip_permissions: bool
    allowed_tools: tuple[str, ...]
    max_turns: int | None
    append_system_prompt: str | None
    resume: bool
    backoff_initial_s: float
    backoff_max_s: float
    backoff_attempts: int
    git_required: bool
    auto_commit: bool | None  # None: on for TODO.md plan folders (seed 004), off for the rest
    branch_auto_create: bool | None  # None: switch to prd.json's branchName when it has one
    branch_prefix: str
    story_order: tuple[str, ...] | None
    notify_desktop: bool | None  # None: notify when a desktop notifier is on PATH
    notify_webhook: str | None
    notify_on: tuple[str, ...]
    sources: Mapping[str, str]
    hooks: LifecycleHooks = field(default_factory=LifecycleHooks)  # config `hooks:` (hooks.py)
    quality_checks: tuple[CommandSpec, ...] = ()  # config `quality_checks:` (seed 003)

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")


# key → (yaml path, env var, converter, default)
_FIELDS: dict[str, tuple[tuple[str, ...], str | None, Converter, Any]] = {
    "max_iterations": (("defaults", "max_iterations"), "RALPH_MAX_ITERATIONS", values.iterations, 20),
    "timeout_s": (("defaults", "timeout_minutes"), "RALPH_TIMEOUT", values.minutes, 15 * 60.0),
    "rate_limit_per_hour": (("defaults", "rate_limit_per_hour"), "RALPH_RATE_LIMIT", values.positive_int, 100),
    "agent": (("agent", "name"), "RALPH_AGENT", values.text, "claude"),
    "agent_command": (("agent", "command"), "RALPH_AGENT_CMD", values.text, None),
    "scripted_script": (("scripted", "script"), "RALPH_SCRIPT", values.text, None),
    "progress_bytes": (("context", "progress_bytes"), None, values.byte_size, 16 * 1024),
    "kill_grace_s": (("process", "kill_grace_seconds"), None, values.seconds, 5.0),
    "log_max_bytes": (("process", "log_max_mb"), None, values.megabytes, 64 * 1024 * 1024),
    # Top-level keys (a one-part path): `completion: trust`, `blocked_threshold: 3`.
    "completion": (("completion",), "RALPH_COMPLETION", values.completion, "verify"),
    "blocked_threshold": (("blocked_threshold",), None, values.positive_int, 3),
    # Seed 002: a failing task is tried this many times in all, then the loop asks for a human.
    "max_retries": (("max_retries",), "RALPH_MAX_RETRIES", values.positive_int, 3),
    "no_progress_threshold": (("circuit_breaker", "no_progress_threshold"), None, values.positive_int, 3),
    "same_error_threshold": (("circuit_breaker", "same_error_threshold"), None, values.positive_int, 5),
    "failure_threshold": (("circuit_breaker", "failure_threshold"), None, values.positive_int, 5),
    "permission_denial_threshold": (("circuit_breaker", "permission_denial_threshold"), None, values.positive_int, 2),
    "cooldown_s": (("circuit_breaker", "cooldown_minutes"), None, values.minutes, None),
    # None: ask on a terminal, wait otherwise (decided where the terminal is known).
    "usage_policy": (("usage_limit", "policy"), "RALPH_ON_USAGE_LIMIT", values.policy, None),
    "usage_pause_at": (("usage_limit", "pause_at"), None, values.fraction, None),
    "usage_margin_s": (("usage_limit", "margin_seconds"), None, values.seconds, 60.0),
    "usage_fallback_wait_s": (("usage_limit", "fallback_wait_minutes"), None, values.minutes, 30 * 60.0),
    "max_cost_usd": (("budget", "max_cost_usd"), "RALPH_MAX_COST_USD", values.money, None),
    "max_tokens": (("budget", "max_tokens"), "RALPH_MAX_TOKENS", values.positive_int, None),
    "max_runtime_s": (("budget", "max_runtime"), "RALPH_MAX_RUNTIME", values.minutes, None),
    "model": (("agent", "model"), "RALPH_MODEL", values.text, None),
    "poorman": (("agent", "poorman"), None, values.flag, False),
    "rate_account": (("rate_limit", "account"), None, values.text, None),
    # Claude Code (agents/claude/): the executable and the flags ralph adds to `claude -p`.
    "claude_command": (("claude", "command"), "RALPH_CLAUDE_COMMAND", values.text, None),
    "skip_permissions": (("claude", "dangerously_skip_permissions"), None, values.flag, False),
    "allowed_tools": (("claude", "allowed_tools"), None, values.tools, ()),
    "max_turns": (("claude", "max_turns"), None, values.positive_int, None),
    "append_system_prompt": (("claude", "append_system_prompt"), None, values.text, None),
    "resume": (("claude", "resume"), None, values.flag, False),
    # Retries of transient API errors (overloaded, network) and of a wrong model: seed 004's backoff.
    "backoff_initial_s": (("backoff", "initial_seconds"), None, values.seconds, 5.0),
    "backoff_max_s": (("backoff", "max_seconds"), None, values.seconds, 600.0),
    "backoff_attempts": (("backoff", "attempts"), None, values.positive_int, 10),
    # git (seeds 003, 004): preflight before the first iteration, the branch, commits after iterations.
    "git_required": (("git", "require"), None, values.flag, True),
    "auto_commit": (("git", "auto_commit"), "RALPH_AUTO_COMMIT", values.flag, None),
    "branch_auto_create": (("branch", "auto_create"), None, values.flag, None),
    "branch_prefix": (("branch", "prefix"), None, values.branch_prefix, "feature/"),
    # Seed 002: the order stories are worked in (default: every spec, sorted naturally).
    "story_order": (("story_order",), None, values.story_ids, None),
    # When a run ends: a desktop notification and a JSON POST (notify.py).
    "notify_desktop": (("notify", "desktop"), None, values.desktop, None),
    "notify_webhook": (("notify", "webhook"), "RALPH_NOTIFY_WEBHOOK", values.webhook, None),
    "notify_on": (("notify", "on"), None, values.notify_on, DEFAULT_EVENTS),
}

# Sections other issues give meaning to; accepted now so that a seed's config loads without warnings.
_KNOWN_SECTIONS = frozenset(
    {
        "defaults",
        "agent",
        "scripted",
        "context",
        "process",
        "circuit_breaker",
        "completion",
        "claude",
        "codex",
        "gemini",
        "opencode",
        "aider",
        "quality_checks",
        "branch",
        "hooks",
        "notify",
        "usage_limit",
        "budget",
        "story_order",
        "blocked_threshold",
        "max_retries",
        "rate_limit",
        "monitor",
        "git",
        "backoff",
    }
)
_USED_KEYS: dict[str, frozenset[str]] = {
    "defaults": frozenset({"max_iterations", "timeout_minutes", "rate_limit_per_hour"}),
    "agent": frozenset({"name", "command", "model", "poorman"}),
    "circuit_breaker": frozenset(
        {
            "no_progress_threshold",
            "same_error_threshold",
            "failure_threshold",
            "permission_denial_threshold",
            "cooldown_minutes",
        }
    ),
    "usage_limit": frozenset({"policy", "pause_at", "margin_seconds", "fallback_wait_minutes"}),
    "budget": frozenset({"max_cost_usd", "max_tokens", "max_runtime"}),
    "rate_limit": frozenset({"account"}),
    "claude": frozenset(
        {"command", "dangerously_skip_permissions", "allowed_tools", "max_turns", "append_system_prompt", "resume"}
    ),
    "backoff": frozenset({"initial_seconds", "max_seconds", "attempts"}),
    "scripted": frozenset({"script"}),
    "context": frozenset({"progress_bytes"}),
    "process": frozenset({"kill_grace_seconds", "log_max_mb"}),
    "git": frozenset({"require", "auto_commit"}),
    "branch": frozenset({"auto_create", "prefix"}),
    "notify": frozenset({"desktop", "webhook", "on"}),
}


def load_settings(
    project_root: str,
    flags: Mapping[str, tuple[Any, str]],
    *,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> Settings:
    """Resolve every setting. `flags` maps a field to (raw value, flag label) for flags the user gave."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {key: spec[3] for key, spec in _FIELDS.items()}
    sources: dict[str, str] = {}
    layer: dict[str, int] = {}  # which layer set a value: 1 user file, 2 project file, 3 env, 4 flags
    files = (os.path.join(ralph_home(), CONFIG_NAME), os.path.join(project_root, RALPH_DIR, CONFIG_NAME))
    hooks: LifecycleHooks = LifecycleHooks()
    gates: tuple[CommandSpec, ...] = ()
    for rank, path in enumerate(files, start=1):
        label = display_path(path, os.getcwd())
        data = read_yaml_mapping(path, label)
        for key, (raw, where) in _file_layer(data, label, warn).items():
            values[key] = _convert(key, raw, f"{label}: {where}")
            sources[key], layer[key] = f"{label} ({where})", rank
        hooks, gates = _commands(data, label, hooks, gates)
    for key, spec in _FIELDS.items():
        name = spec[1]
        if name and env.get(name, "").strip():
            values[key] = _convert(key, env[name], f"environment variable {name}")
            sources[key], layer[key] = f"${name}", 3
    for key, (raw, label) in flags.items():
        values[key] = _convert(key, raw, label)
        sources[key], layer[key] = label, 4
    # A command given at a layer at least as specific as the agent's name means the command agent.
    if values["agent_command"] and layer.get("agent_command", 0) >= layer.get("agent", 0):
        values["agent"] = "command"
        sources["agent"] = sources["agent_command"]
    if values["scripted_script"] and not os.path.isabs(values["scripted_script"]):
        values["scripted_script"] = os.path.join(project_root, values["scripted_script"])
    return Settings(**values, sources=sources, hooks=hooks, quality_checks=gates)


def _commands(
    data: dict[str, Any] | None, label: str, hooks: LifecycleHooks, gates: tuple[CommandSpec, ...]
) -> tuple[LifecycleHooks, tuple[CommandSpec, ...]]:
    """`hooks:` and `quality_checks:` of one config file over those of the files before it: an event's
    commands, or a gate, given again replace the earlier ones; the rest are kept."""
    if not data:
        return hooks, gates
    try:
        if data.get("hooks") is not None:
            found = parse_hooks(data["hooks"])
            hooks = LifecycleHooks({**hooks.commands, **found.commands}, found.timeout_s or hooks.timeout_s)
        if data.get("quality_checks") is not None:
            mine = parse_quality_checks(data["quality_checks"])
            names = {gate.name for gate in mine}
            gates = tuple(gate for gate in gates if gate.name not in names) + mine
    except ValueError as exc:
        raise RalphError(f"{label}: {exc}") from None
    return hooks, gates


def _convert(key: str, raw: Any, where: str) -> Any:
    try:
        return _FIELDS[key][2](raw)
    except (ValueError, TypeError) as exc:
        raise RalphError(f"{where}: {exc}") from None


def _file_layer(data: dict[str, Any] | None, label: str, warn: Callable[[str], None]) -> dict[str, tuple[Any, str]]:
    if data is None:
        return {}
    for section in data:
        if section not in _KNOWN_SECTIONS:
            warn(f"{label}: unknown setting {section!r} (ignored)")
    # `agent: claude` is shorthand for `agent: {name: claude}`.
    if isinstance(data.get("agent"), str):
        data["agent"] = {"name": data["agent"]}
    # YAML 1.1 reads a bare `on:` key as the boolean true.
    if isinstance(data.get("notify"), dict) and True in data["notify"]:
        data["notify"]["on"] = data["notify"].pop(True)
    found: dict[str, tuple[Any, str]] = {}
    for section, keys in _USED_KEYS.items():
        body = data.get(section)
        if body is None:
            continue
        if not isinstance(body, dict):
            raise RalphError(f"{label}: {section}: expected a mapping")
        for name in body:
            if name not in keys:
                warn(f"{label}: unknown setting '{section}.{name}' (ignored)")
    for key, spec in _FIELDS.items():
        if len(spec[0]) == 1:
            value = data.get(spec[0][0])
            if isinstance(value, dict):  # `completion: {mode: trust}` reads like `completion: trust`
                value = value.get("mode")
            if value is not None:
                found[key] = (value, spec[0][0])
            continue
        section, name = spec[0]
        body = data.get(section)
        if isinstance(body, dict) and body.get(name) is not None:
            found[key] = (body[name], f"{section}.{name}")
    return found


def read_yaml_mapping(path: str, label: str) -> dict[str, Any] | None:
    """A YAML file's top-level mapping; None when the file is absent or empty. Never executes anything."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RalphError(f"{label}: cannot read: {exc.strerror}") from None
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(raw, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise RalphError(f"{label}: invalid YAML{where}: {problem}") from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise RalphError(f"{label}: expected a mapping of settings at the top level")
    return data
