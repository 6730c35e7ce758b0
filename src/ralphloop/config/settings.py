"""Layered settings with provenance: defaults < ~/.ralph/config.yaml < .ralph/config.yaml < env < flags.

Config files are data (YAML safe loader), never code. Each value remembers where it
came from, so an error or `--dry-run` can say "-t/--timeout" or ".ralph/config.yaml (defaults.timeout_minutes)".

`Settings` is made of components, each a frozen value owned by the module that uses it (the breaker's
BreakerConfig, the agent process's ProcessLimits, Claude's ClaudeSettings, ...), built here from one table,
`_TABLE`. Every setting keeps a flat key (`timeout_s`): flags name it, and `settings.source(key)` says where
its value came from. An agent plugin reads its own section with `settings.section(NAME)` (agents/registry.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from ralphloop.config.questions import QUESTIONS_FIELDS, QUESTIONS_TABLE, QuestionSettings
from ralphloop.config.raw_sections import merged_sections
from ralphloop.config.scale import SCALE_FIELDS, SCALE_TABLE, ScaleSettings
from ralphloop.core.errors import RalphError
from ralphloop.core.hook_spec import CommandSpec, LifecycleHooks
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.guards.windows import WindowCaps, parse_caps
from ralphloop.hooks.parse import parse_hooks, parse_quality_checks
from ralphloop.notify.settings import NOTIFY_FIELDS, NOTIFY_TABLE, NotifySettings
from ralphloop.plugins.agents import CLI_BACKENDS
from ralphloop.plugins.formats import DEFAULT_MAX_ITERATIONS
from ralphloop.processes.sandbox_settings import SANDBOX_FIELDS, SANDBOX_TABLE
from ralphloop.project.paths import RALPH_DIR, display_path, ralph_home
from ralphloop.words import values

if TYPE_CHECKING:
    from ralphloop.config.policy import AgentSettings, LoopSettings, UsagePolicy
    from ralphloop.core.runner import ProcessLimits
    from ralphloop.guards.backoff import Backoff
    from ralphloop.guards.breaker import BreakerConfig
    from ralphloop.guards.budget import Budget
    from ralphloop.processes.sandbox_settings import SandboxSettings
    from ralphloop.workspace.git import GitSettings

CONFIG_NAME = "config.yaml"
CACHE_DIR = os.path.join("cache", "config")  # under ralph's home: what config files were read as (files/yaml_cache.py)
_NONE: Mapping[str, Any] = MappingProxyType({})


class Settings(Struct, frozen=True):
    """Everything `ralph run` needs to know, resolved: one component for each part of ralph that uses it."""

    loop: LoopSettings
    process: ProcessLimits
    breaker: BreakerConfig
    usage: UsagePolicy  # `ask` as configured; UsagePolicy.at decides once the terminal is known
    budget: Budget
    backoff: Backoff
    agent: AgentSettings
    # Claude's own section (agents/claude/settings.py's ClaudeSettings, made through the plug-in table: config
    # names no backend's class; the backend types what it reads)
    claude: Any
    commands: Mapping[str, str | None]  # each CLI backend's executable (`NAME.command`); None: its name on PATH
    git: GitSettings
    notify: NotifySettings
    sandbox: SandboxSettings
    questions: QuestionSettings  # how a loop that needs a human waits for an answer (issue 36)
    scale: ScaleSettings  # where a parallel run's loops run (issue 37)
    hooks: LifecycleHooks  # config `hooks:` (hooks.py)
    quality_checks: tuple[CommandSpec, ...]  # config `quality_checks:` (seed 003)
    sources: Mapping[str, str]  # settings key → where its value came from (absent: the default)
    sections: Mapping[str, Mapping[str, Any]]  # each section of the config files, raw, the project's over the user's

    def source(self, key: str) -> str:
        """Where the setting `key` came from: a flag, `$RALPH_…`, `FILE (section.name)` or "default"."""
        return self.sources.get(key, "default")

    def section(self, name: str) -> Mapping[str, Any]:
        """The raw mapping under `name:` in the config files, the project's keys over the user's ({} if none)."""
        return self.sections.get(name, _NONE)


_Spec = tuple[tuple[str, ...], str | None, values.Converter, Any]
_CB = "circuit_breaker"
# component → settings key → (yaml path, env var, converter, default). A key is the component's field of
# the same name, unless _FIELD_NAMES names another.
_TABLE: dict[str, dict[str, _Spec]] = {
    "loop": {
        "max_iterations": (
            ("defaults", "max_iterations"),
            "RALPH_MAX_ITERATIONS",
            values.iterations,
            DEFAULT_MAX_ITERATIONS,
        ),
        "rate_limit_per_hour": (("defaults", "rate_limit_per_hour"), "RALPH_RATE_LIMIT", values.positive_int, 100),
        "progress_bytes": (("context", "progress_bytes"), None, values.byte_size, 16 * 1024),
        # Top-level keys (a one-part path): `completion: trust`, `blocked_threshold: 3`.
        "completion": (("completion",), "RALPH_COMPLETION", values.completion, "verify"),
        "promise": (("completion", "promise"), None, values.promise, None),  # seed 003; None: the default
        "blocked_threshold": (("blocked_threshold",), None, values.positive_int, 3),
        # Seed 002: a failing task is tried this many times in all, then the loop asks for a human.
        "max_retries": (("max_retries",), "RALPH_MAX_RETRIES", values.positive_int, 3),
        "rate_account": (("rate_limit", "account"), None, values.text, None),
        # Seed 002: the order stories are worked in (default: every spec, sorted naturally).
        "story_order": (("story_order",), None, values.story_ids, None),
    },
    "process": {
        "timeout_s": (("defaults", "timeout_minutes"), "RALPH_TIMEOUT", values.minutes, 15 * 60.0),
        "kill_grace_s": (("process", "kill_grace_seconds"), None, values.seconds, 5.0),
        "log_max_bytes": (("process", "log_max_mb"), None, values.megabytes, 64 * 1024 * 1024),
        "idle_timeout_s": (("process", "idle_timeout_minutes"), "RALPH_IDLE_TIMEOUT", values.idle_minutes, None),
    },
    "breaker": {
        "no_progress_threshold": (("circuit_breaker", "no_progress_threshold"), None, values.positive_int, 3),
        "same_error_threshold": (("circuit_breaker", "same_error_threshold"), None, values.positive_int, 5),
        "failure_threshold": (("circuit_breaker", "failure_threshold"), None, values.positive_int, 5),
        "permission_denial_threshold": ((_CB, "permission_denial_threshold"), None, values.positive_int, 2),
        "cooldown_s": (("circuit_breaker", "cooldown_minutes"), None, values.minutes, None),
    },
    "usage": {
        # ask: on a terminal; without one, wait (decided where the terminal is known).
        "usage_policy": (("usage_limit", "policy"), "RALPH_ON_USAGE_LIMIT", values.policy, "ask"),
        "usage_pause_at": (("usage_limit", "pause_at"), None, values.fraction, None),
        "usage_margin_s": (("usage_limit", "margin_seconds"), None, values.seconds, 60.0),
        "usage_fallback_wait_s": (("usage_limit", "fallback_wait_minutes"), None, values.minutes, 30 * 60.0),
        # seed 003: an `ask` nobody answers in 30 s exits (exit 2, the command to run after the reset).
        "usage_ask_timeout_s": (("usage_limit", "ask_timeout_seconds"), None, values.seconds, 30.0),
        "usage_on_no_answer": (("usage_limit", "on_no_answer"), None, values.no_answer, "exit"),
        "usage_windows": (("usage_limit", "windows"), "RALPH_MAX_WINDOW", parse_caps, WindowCaps()),
    },
    "budget": {
        "max_cost_usd": (("budget", "max_cost_usd"), "RALPH_MAX_COST_USD", values.money, None),
        "max_tokens": (("budget", "max_tokens"), "RALPH_MAX_TOKENS", values.token_count, None),
        "max_runtime_s": (("budget", "max_runtime"), "RALPH_MAX_RUNTIME", values.minutes, None),
    },
    # Retries of transient API errors (overloaded, network) and of a wrong model: seed 004's backoff.
    "backoff": {
        "backoff_initial_s": (("backoff", "initial_seconds"), None, values.seconds, 5.0),
        "backoff_max_s": (("backoff", "max_seconds"), None, values.seconds, 600.0),
        "backoff_attempts": (("backoff", "attempts"), None, values.positive_int, 10),
    },
    "agent": {
        "agent": (("agent", "name"), "RALPH_AGENT", values.agent_names, "claude"),  # "claude,codex": failover
        "agents": (("agents",), None, values.agent_list, None),  # `agents: [claude, codex]`: the same
        "agent_command": (("agent", "command"), "RALPH_AGENT_CMD", values.text, None),
        "model": (("agent", "model"), "RALPH_MODEL", values.text, None),
        "poorman": (("agent", "poorman"), None, values.flag, False),
        "permissions": (("permissions",), "RALPH_PERMISSIONS", values.permissions, "edits"),
        "scripted_script": (("scripted", "script"), "RALPH_SCRIPT", values.text, None),
    },
    # Claude Code (agents/claude/): the executable and the flags ralph adds to `claude -p`.
    # Each CLI backend's executable: `codex.command`, $RALPH_CODEX_COMMAND (the backends of agents/registry.py).
    "commands": {
        f"{name}_command": ((name, "command"), f"RALPH_{name.upper()}_COMMAND", values.text, None)
        for name in CLI_BACKENDS
    },
    "claude": {
        # Claude Code's own `permissions: all` (the switch before `permissions`); other agents keep theirs.
        "skip_permissions": (("claude", "dangerously_skip_permissions"), None, values.flag, False),
        "allowed_tools": (("claude", "allowed_tools"), None, values.tools, ()),
        "max_turns": (("claude", "max_turns"), None, values.positive_int, None),
        "append_system_prompt": (("claude", "append_system_prompt"), None, values.text, None),
        "resume": (("claude", "resume"), None, values.flag, False),
    },
    # git (seeds 003, 004): preflight before the first iteration, the branch, commits after iterations.
    "git": {
        "git_required": (("git", "require"), None, values.flag, True),
        "auto_commit": (("git", "auto_commit"), "RALPH_AUTO_COMMIT", values.flag, None),
        "branch_auto_create": (("branch", "auto_create"), None, values.flag, None),
        "branch_prefix": (("branch", "prefix"), None, values.branch_prefix, "feature/"),
        "fast_forward_checked_out": (("merge", "fast_forward_checked_out"), None, values.flag, False),
        "merge_resolve": (("merge", "resolve"), None, values.merge_resolve, "retry"),
    },
    "notify": NOTIFY_TABLE,  # notifications during the run and at its end (notify/settings.py)
    "sandbox": SANDBOX_TABLE,  # the sandbox around the agent (processes/sandbox.py, start/sandbox.py)
    "questions": QUESTIONS_TABLE,  # a loop waiting for `ralph answer` (config/questions.py)
    "scale": SCALE_TABLE,  # a parallel run here or on Temporal's workers (config/scale.py)
}
_FIELD_NAMES = {
    "permission_denial_threshold": "denial_threshold",
    "usage_policy": "action",
    "usage_pause_at": "pause_at",
    "usage_margin_s": "margin_s",
    "usage_fallback_wait_s": "fallback_wait_s",
    "usage_ask_timeout_s": "ask_timeout_s",
    "usage_on_no_answer": "on_no_answer",
    "usage_windows": "windows",
    "backoff_initial_s": "initial_s",
    "backoff_max_s": "cap_s",
    "backoff_attempts": "attempts",
    "agent": "name",
    "agents": "chain",
    "agent_command": "command",
    **{f"{name}_command": name for name in CLI_BACKENDS},
    "git_required": "require",
    **SANDBOX_FIELDS,
    **NOTIFY_FIELDS,
    **QUESTIONS_FIELDS,
    **SCALE_FIELDS,
}
_FIELDS: dict[str, _Spec] = {key: spec for keys in _TABLE.values() for key, spec in keys.items()}


def _names_by_section() -> dict[str, frozenset[str]]:
    """Section → the names the table reads in it (any other name there is warned about)."""
    found: dict[str, set[str]] = {}
    for path, *_ in _FIELDS.values():
        if len(path) == 2:
            found.setdefault(path[0], set()).add(path[1])
    return {section: frozenset(names) for section, names in found.items()}


_USED_KEYS = _names_by_section()
# Top-level names that are sections too: `completion: trust` or `completion: {mode: trust, promise: "..."}`
_SHORT_FORMS = frozenset(spec[0][0] for spec in _FIELDS.values() if len(spec[0]) == 1) & _USED_KEYS.keys()
# Sections other issues give meaning to, or read elsewhere; accepted so that a seed's config loads without
# warnings. A section named after the agent in use is accepted too: a plugin's own (Settings.section).
_OTHERS = {"gemini", "opencode", "aider", "quality_checks", "hooks", "monitor", "serve"}  # serve: web/server.py
_KNOWN_SECTIONS = frozenset({spec[0][0] for spec in _FIELDS.values()} | _OTHERS)


def load_settings(
    project_root: str,
    flags: Mapping[str, tuple[Any, str]],
    *,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] = lambda message: None,
    seed_defaults: Mapping[str, Any] | None = None,
    seed_label: str = "",
) -> Settings:
    """Resolve every setting. `flags` maps a settings key to (raw value, flag label) for flags the user gave.
    `seed_defaults` (settings key → value) are the task format's own, over ralph's and under everything else;
    their source reads `seed_label`."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {key: spec[3] for key, spec in _FIELDS.items()}
    sources: dict[str, str] = {}
    for key, value in (seed_defaults or {}).items():
        values[key], sources[key] = value, seed_label
    layer: dict[str, int] = {}  # which layer set a value: 1 user file, 2 project file, 3 env, 4 flags
    files = (os.path.join(ralph_home(), CONFIG_NAME), os.path.join(project_root, RALPH_DIR, CONFIG_NAME))
    hooks: LifecycleHooks = LifecycleHooks()
    gates: tuple[CommandSpec, ...] = ()
    read: list[tuple[str, dict[str, Any]]] = []  # each config file's label and settings, the user's first
    notes: list[tuple[str | None, str]] = []  # (the unknown section, or None; the warning) in the files' order
    try:
        for rank, path in enumerate(files, start=1):
            label = display_path(path, os.getcwd())
            data = read_yaml_mapping(path, label, cache=os.path.join(ralph_home(), CACHE_DIR))
            for key, (raw, where) in _file_layer(data, label, notes).items():
                values[key] = _convert(key, raw, f"{label}: {where}")
                sources[key], layer[key] = f"{label} ({where})", rank
            hooks, gates = _commands(data, label, hooks, gates)
            read.append((label, data or {}))
        for key, spec in _FIELDS.items():
            variable = spec[1]
            if variable and env.get(variable, "").strip():
                values[key] = _convert(key, env[variable], f"environment variable {variable}")
                sources[key], layer[key] = f"${variable}", 3
        for key, (raw, label) in flags.items():
            values[key] = _convert(key, raw, label)
            sources[key], layer[key] = label, 4
        # A command given at a layer at least as specific as the agent's name means the command agent.
        if values["agent_command"] and layer.get("agent_command", 0) >= layer.get("agent", 0):
            values["agent"], sources["agent"], layer["agent"] = (
                "command",
                sources["agent_command"],
                layer["agent_command"],
            )
        if values["agents"] and layer.get("agents", 0) >= layer.get("agent", 0):
            values["agent"], sources["agent"] = ",".join(values["agents"]), sources["agents"]
        values["agents"] = tuple(values["agent"].split(","))  # the failover order; the first is the agent
        values["agent"] = values["agents"][0]
    finally:
        for section, message in notes:  # the agent's own section is its plugin's business
            if section not in (values["agents"] or values["agent"].split(",")):
                warn(message)
    if values["scripted_script"] and not os.path.isabs(values["scripted_script"]):
        values["scripted_script"] = os.path.join(project_root, values["scripted_script"])
    return Settings(
        **{name: build(**_fields(name, values)) for name, build in _components().items()},
        hooks=hooks,
        quality_checks=gates,
        sources=MappingProxyType(sources),
        sections=merged_sections(read, values["agents"], _KNOWN_SECTIONS),
    )


def _components() -> dict[str, Callable[..., Any]]:
    """Each component's class, by its name in Settings. Imported here, when settings are loaded: a module
    that imports this one for `Settings` (a type) stays light."""
    from ralphloop.config.policy import AgentSettings, LoopSettings, UsagePolicy
    from ralphloop.core.runner import ProcessLimits
    from ralphloop.guards.backoff import Backoff
    from ralphloop.guards.breaker import BreakerConfig
    from ralphloop.guards.budget import Budget
    from ralphloop.plugins.agents import settings_class
    from ralphloop.processes.sandbox_settings import SandboxSettings
    from ralphloop.workspace.git import GitSettings

    return {
        "loop": LoopSettings,
        "process": ProcessLimits,
        "breaker": BreakerConfig,
        "usage": UsagePolicy,
        "budget": Budget,
        "backoff": Backoff,
        "agent": AgentSettings,
        "claude": settings_class("claude"),  # Claude's own, known to the plug-in table alone
        "commands": lambda **found: MappingProxyType(found),
        "git": GitSettings,
        "notify": NotifySettings,
        "sandbox": SandboxSettings,
        "questions": QuestionSettings,
        "scale": ScaleSettings,
    }


def _fields(component: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """One component's fields, from the resolved values of its keys."""
    return {_FIELD_NAMES.get(key, key): values[key] for key in _TABLE[component]}


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


def _file_layer(
    data: dict[str, Any] | None, label: str, notes: list[tuple[str | None, str]]
) -> dict[str, tuple[Any, str]]:
    """The values one config file sets: settings key → (raw value, "section.name"). Unknown names go to `notes`."""
    if data is None:
        return {}
    for section in data:
        if section not in _KNOWN_SECTIONS:
            notes.append((section, f"{label}: unknown setting {section!r} (ignored)"))
    # `agent: claude` is shorthand for `agent: {name: claude}`.
    if isinstance(data.get("agent"), str):
        data["agent"] = {"name": data["agent"]}
    # YAML 1.1 reads a bare `on:` key as the boolean true.
    if isinstance(data.get("notify"), dict) and True in data["notify"]:
        data["notify"]["on"] = data["notify"].pop(True)
    found: dict[str, tuple[Any, str]] = {}
    for section, body in data.items():
        keys = _USED_KEYS.get(section)
        if keys is None or body is None:
            continue
        if not isinstance(body, dict):
            if section in _SHORT_FORMS:  # `completion: trust`, the short form of `completion: {mode: trust}`
                continue
            raise RalphError(f"{label}: {section}: expected a mapping")
        for name in body:
            if name not in keys and not (name == "mode" and section in _SHORT_FORMS):
                notes.append((None, f"{label}: unknown setting '{section}.{name}' (ignored)"))
    for key, spec in _FIELDS.items():
        if len(spec[0]) == 1:
            value = data.get(spec[0][0])
            if isinstance(value, dict) and spec[0][0] in _SHORT_FORMS:  # `completion: {mode: trust}`
                named = sorted({"mode", *_USED_KEYS.get(spec[0][0], ())})
                if not value.keys() & set(named):
                    raise RalphError(f"{label}: {spec[0][0]}: expected a value, or a mapping of {', '.join(named)}")
                value = value.get("mode")
            if value is not None:
                found[key] = (value, spec[0][0])
            continue
        section, name = spec[0]
        body = data.get(section)
        if isinstance(body, dict) and body.get(name) is not None:
            found[key] = (body[name], f"{section}.{name}")
    return found
