"""Agent backends by name: `--agent NAME` (or `agent: NAME` in config) picks one.

A backend is an AgentSpec (plugins/agents.py): a factory `(settings, paths) -> Agent` named by an import path
"module:factory" and imported only when a run uses it, with its log parser, log reader, sniffers and settings.
Ralph's own are rows of CATALOG; another package adds one under the entry-point group `ralphloop.agents`
(`[project.entry-points."ralphloop.agents"] NAME = "module:SPEC"`, or `"module:factory"` for a factory alone), and
both are found through the same door, `plugins/agents.spec_of`. A built-in name always wins.

A factory gets the run's `config/settings.Settings`: `settings.agent` (config/policy.py's AgentSettings: the name, the
model, the permissions) and the components it needs; a CLI backend's executable is `settings.commands[NAME]`.
A plugin keeps its own options in a section of the config files
named after it and reads them with `settings.section("myagent")`: the raw mapping under `myagent:`, the
project file's keys over the user file's ({} when neither has one). Checking those keys is the plugin's own
business; ralph does not warn about a section named after the agent in use.

What a plugin's factory returns is checked here, once: it must have a name, `command` and `parser`; every optional
member of an Agent it lacks (core/protocols.AgentDefaults) it is given, so that nothing after this asks.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from msgspec.structs import replace

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentDefaults
from ralphloop.plugins.agents import CATALOG, AgentSpec, plugin_entry_points, spec_of
from ralphloop.plugins.entry_points import load
from ralphloop.words.textsafe import one_line

if TYPE_CHECKING:
    from ralphloop.config.settings import Settings
    from ralphloop.core.clock import Clock
    from ralphloop.core.protocols import Agent, AgentCommand, AgentRequest, OutputParser
    from ralphloop.project.paths import FeaturePaths

    AgentFactory = Callable[[Settings, FeaturePaths], Agent]

# The members an Agent must have, and those a plugin's may leave to their defaults.
_REQUIRED = ("name", "command", "parser")
_OPTIONAL = ("missing", "account", "commits", "runtime_files", "permissions", "held", "sandbox")


def make_agent(settings: Settings, paths: FeaturePaths, *, dry_run: bool = False, clock: Clock | None = None) -> Agent:
    """The backend `settings.agent.name` names, ready to run, or a one-line error listing the known ones; with
    several (`--agent claude,codex`), each of them behind one FailoverAgent. An executable that is not installed
    (an agent's `missing`) stops a run, not a dry run: it starts nothing."""
    chain = settings.agent.chain
    if len(chain) <= 1:
        agent = _make(settings, paths, dry_run=dry_run)
        if not agent.account:
            return agent
        members = [agent]  # alone, its limits still go into the book, for the failover chains of other loops
    else:
        members = [_make(member_settings(settings, name), paths, dry_run=dry_run) for name in chain]
    from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook
    from ralphloop.agents.failover import FailoverAgent
    from ralphloop.core.clock import SystemClock
    from ralphloop.project.paths import ralph_home

    book = LimitBook(os.path.join(ralph_home(), LIMITS_FILE))
    usage = settings.usage
    return FailoverAgent(members, book, clock or SystemClock(), usage.fallback_wait_s, usage.margin_s, usage.windows)


def member_settings(settings: Settings, name: str) -> Settings:
    """The settings as agent `name` of a failover chain sees them: its own name, and --model only if it is
    the first (a model name means one vendor's model)."""
    first = name == settings.agent.chain[0]
    agent = replace(settings.agent, name=name, model=settings.agent.model if first else None, chain=(name,))
    return replace(settings, agent=agent)


def checked_agent(settings: Settings, paths: FeaturePaths, clock: Clock | None = None) -> Agent:
    """The agent the settings name, made as a dry run makes it, with everything its settings and the workspace's
    files refuse raised: an unknown name, a command agent's missing or unsplittable command, a scripted agent's
    script, a CLI backend's settings (amp's `permissions: ask`). Whether an executable is on PATH is the machine's
    business, left to `ready` (`ralph validate` checks inputs; `ralph run` builds its run with this agent)."""
    chain = settings.agent.chain if len(settings.agent.chain) > 1 else (settings.agent.name,)
    for name in chain:
        if name == "command":
            from ralphloop.agents.command import required_command, split_command

            member = member_settings(settings, name) if len(chain) > 1 else settings
            split_command(required_command(member), member.source("agent_command"))
    return make_agent(settings, paths, dry_run=True, clock=clock)


def ready(agent: Agent) -> None:
    """Raise what stops a run of an agent `checked_agent` made: a CLI that is not installed (the first member of a
    failover chain whose CLI is missing, as `make_agent` says it)."""
    from ralphloop.agents.failover import FailoverAgent

    for member in agent.agents if isinstance(agent, FailoverAgent) else (agent,):
        if member.missing:
            spec = spec_of(member.name)
            _refuse_missing(member.name, spec or AgentSpec(""), member)


def _refuse_missing(name: str, spec: AgentSpec, agent: Agent) -> None:
    if agent.missing:  # its CLI is not installed, say
        raise RalphError(agent.missing if not spec.plugin else f"{_label(name, spec)}: {one_line(agent.missing, 300)}")


def _make(settings: Settings, paths: FeaturePaths, *, dry_run: bool) -> Agent:
    name = settings.agent.name
    spec = _spec(settings)
    factory = _factory(name, spec)
    if not spec.plugin:
        agent = factory(settings, paths)  # ours: an exception here is a bug, reported with its traceback
    else:
        try:
            made = factory(settings, paths)
        except RalphError:
            raise  # the plugin's own message for the user
        except Exception as exc:
            raise RalphError(f"{_label(name, spec)} failed to start: {_said(exc)}") from None
        agent = _completed(name, spec, made)
    if not dry_run:
        _refuse_missing(name, spec, agent)
    return agent


def _completed(name: str, spec: AgentSpec, made: object) -> Agent:
    """A plugin's agent as the run uses it: refused when it is not one, given the defaults of what it leaves out."""
    lacking = [part for part in _REQUIRED if not hasattr(made, part)]
    if lacking:
        what = f"returned {type(made).__name__}, not an agent (no {', '.join(lacking)})"
        raise RalphError(f"{_label(name, spec)}: {what}")
    if isinstance(made, AgentDefaults) or all(hasattr(made, part) for part in _OPTIONAL):
        agent = cast("Agent", made)
    else:
        agent = _PluginAgent(made)
    if agent.missing is not None and not isinstance(agent.missing, str):
        raise RalphError(f"{_label(name, spec)}: its `missing` is a {type(agent.missing).__name__}, not a message")
    return agent


class _PluginAgent(AgentDefaults):
    """A plugin's agent that sets only some of an Agent's optional members: the rest are the defaults."""

    def __init__(self, made: object) -> None:
        self._made = made
        self.name = str(made.name)  # type: ignore[attr-defined]
        for part in _OPTIONAL:
            if hasattr(made, part):
                setattr(self, part, getattr(made, part))

    def command(self, request: AgentRequest) -> AgentCommand:
        return cast("AgentCommand", self._made.command(request))  # type: ignore[attr-defined]

    def parser(self, request: AgentRequest) -> OutputParser:
        return cast("OutputParser", self._made.parser(request))  # type: ignore[attr-defined]


def _spec(settings: Settings) -> AgentSpec:
    name = settings.agent.name
    try:
        spec = spec_of(name)
    except Exception as exc:  # a plugin whose entry point cannot be loaded
        target, provider = plugin_entry_points()[name]
        raise RalphError(f"agent plugin {name!r} ({target} from {provider}) cannot be loaded: {_said(exc)}") from None
    if spec is None:
        known = ", ".join(sorted({*CATALOG, *plugin_entry_points()}))
        raise RalphError(f"{settings.source('agent')}: unknown agent {name!r} (known: {known})")
    return spec


def _label(name: str, spec: AgentSpec) -> str:
    """How an error names the backend: a plugin by its entry point and distribution."""
    return f"agent plugin {name!r} ({spec.factory} from {spec.plugin})" if spec.plugin else repr(name)


def _factory(name: str, spec: AgentSpec) -> AgentFactory:
    """The backend's factory, its module imported now; a plugin's that cannot be loaded is a one-line error."""
    try:
        found = load(spec.factory)
        if not callable(found):
            raise TypeError(f"{spec.factory} is a {type(found).__name__}, not a factory")
    except Exception as exc:
        if not spec.plugin:
            raise
        raise RalphError(f"{_label(name, spec)} cannot be loaded: {_said(exc)}") from None
    return cast("AgentFactory", found)


def _said(exc: BaseException) -> str:
    """An exception as one line: its type and message."""
    text = one_line(str(exc), 300)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
