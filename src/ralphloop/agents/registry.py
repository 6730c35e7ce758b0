"""Agent backends by name: `--agent NAME` (or `agent: NAME` in config) picks one.

A backend is a factory `(settings, paths) -> Agent` named by an import path "module:factory" and imported only
when a run uses it. Ralph's own are rows of CATALOG (with their log parser, monitor reader and settings);
another package adds one under the entry-point group
`ralphloop.agents` (`[project.entry-points."ralphloop.agents"] NAME = "module:factory"`), and both are loaded
through the same door, `_factory`. Entry points are read only for a name that is not built in: scanning the
installed distributions costs start-up time that every run would otherwise pay. A built-in name always wins.

A factory gets the run's `config/settings.Settings`: `settings.agent` (config/policy.py's AgentSettings: the name, the
model, the permissions) and the components it needs; a CLI backend's executable is `settings.commands[NAME]`.
A plugin keeps its own options in a section of the config files
named after it and reads them with `settings.section("myagent")`: the raw mapping under `myagent:`, the
project file's keys over the user file's ({} when neither has one). Checking those keys is the plugin's own
business; ralph does not warn about a section named after the agent in use.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, cast

from ralphloop.core.errors import RalphError
from ralphloop.plugins.agents import BUILT_IN, CATALOG
from ralphloop.words.textsafe import one_line

if TYPE_CHECKING:
    from ralphloop.config.settings import Settings
    from ralphloop.core.protocols import Agent, Clock
    from ralphloop.project.paths import FeaturePaths

    AgentFactory = Callable[[Settings, FeaturePaths], Agent]

ENTRY_POINT_GROUP: Final = "ralphloop.agents"


@dataclass(frozen=True, slots=True)
class Backend:
    """Where a backend's factory lives, and who provides it."""

    name: str
    target: str  # "module:factory"
    plugin: str = ""  # the distribution that provides it ("ralph-echo 1.0"); "" for ralph's own

    @property
    def label(self) -> str:
        """How an error names the backend: a plugin by its entry point and distribution."""
        return f"agent plugin {self.name!r} ({self.target} from {self.plugin})" if self.plugin else repr(self.name)


def make_agent(settings: Settings, paths: FeaturePaths, *, dry_run: bool = False, clock: Clock | None = None) -> Agent:
    """The backend `settings.agent.name` names, ready to run, or a one-line error listing the known ones; with
    several (`--agent claude,codex`), each of them behind one FailoverAgent. An executable that is not installed
    (an agent's `missing`) stops a run, not a dry run: it starts nothing."""
    chain = settings.agent.chain
    if len(chain) <= 1:
        agent = _make(settings, paths, dry_run=dry_run)
        if not getattr(agent, "account", None):
            return agent
        members = [agent]  # alone, its limits still go into the book, for the failover chains of other loops
    else:
        members = [_make(member_settings(settings, name), paths, dry_run=dry_run) for name in chain]
    from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook
    from ralphloop.agents.failover import FailoverAgent
    from ralphloop.core.protocols import SystemClock
    from ralphloop.project.paths import ralph_home

    book = LimitBook(os.path.join(ralph_home(), LIMITS_FILE))
    usage = settings.usage
    return FailoverAgent(members, book, clock or SystemClock(), usage.fallback_wait_s, usage.margin_s)


def member_settings(settings: Settings, name: str) -> Settings:
    """The settings as agent `name` of a failover chain sees them: its own name, and --model only if it is
    the first (a model name means one vendor's model)."""
    first = name == settings.agent.chain[0]
    agent = replace(settings.agent, name=name, model=settings.agent.model if first else None, chain=(name,))
    return replace(settings, agent=agent)


def _make(settings: Settings, paths: FeaturePaths, *, dry_run: bool) -> Agent:
    backend = _named(settings)
    factory = _factory(backend)
    if not backend.plugin:
        agent = factory(settings, paths)  # ours: an exception here is a bug, reported with its traceback
        missing = getattr(agent, "missing", None)
        if missing and not dry_run:
            raise RalphError(missing)
        return agent
    try:
        agent = factory(settings, paths)
    except RalphError:
        raise  # the plugin's own message for the user
    except Exception as exc:
        raise RalphError(f"{backend.label} failed to start: {_said(exc)}") from None
    lacking = [part for part in ("name", "command", "parser") if not hasattr(agent, part)]
    if lacking:
        raise RalphError(f"{backend.label} returned {type(agent).__name__}, not an agent (no {', '.join(lacking)})")
    missing = getattr(agent, "missing", None)
    if isinstance(missing, str) and missing and not dry_run:
        raise RalphError(f"{backend.label}: {one_line(missing, 300)}")  # its CLI is not installed, say
    return agent


def check_agent_settings(settings: Settings, paths: FeaturePaths) -> None:
    """Raise the error `make_agent` would for the settings and the workspace's files alone: an unknown name, a
    command agent's missing or unsplittable command, a scripted agent's script. Whether an executable is on
    PATH is the machine's business, left to `make_agent` (`ralph validate` checks inputs)."""
    if len(settings.agent.chain) > 1:
        for name in settings.agent.chain:
            check_agent_settings(member_settings(settings, name), paths)
        return
    _named(settings)
    row = CATALOG.get(settings.agent.name)
    if row is not None and row.cli:
        _make(settings, paths, dry_run=True)  # what its settings refuse (amp's `permissions: ask`), not PATH
    if settings.agent.name == "command":
        from ralphloop.agents.command import required_command, split_command

        split_command(required_command(settings), settings.source("agent_command"))
    elif settings.agent.name == "scripted":
        from ralphloop.agents.scripted import make

        make(settings, paths)  # it only reads and checks the script


def _named(settings: Settings) -> Backend:
    backend = find_backend(settings.agent.name)
    if backend is None:
        known = ", ".join(sorted({*BUILT_IN, *plugin_backends()}))
        raise RalphError(f"{settings.source('agent')}: unknown agent {settings.agent.name!r} (known: {known})")
    return backend


def find_backend(name: str) -> Backend | None:
    """The backend called `name`: a built-in one, else a plugin's; None when there is none."""
    target = BUILT_IN.get(name)
    if target is not None:
        return Backend(name, target)
    return plugin_backends().get(name)


def plugin_backends() -> dict[str, Backend]:
    """The backends installed packages add through the entry-point group (the first one of a name wins)."""
    from importlib.metadata import entry_points  # costs start-up time: only when a name is not built in

    found: dict[str, Backend] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in BUILT_IN or point.name in found:
            continue
        dist = point.dist
        provider = f"{dist.name} {dist.version}" if dist is not None else "an unnamed distribution"
        found[point.name] = Backend(point.name, f"{point.module}:{point.attr}", provider)
    return found


def _factory(backend: Backend) -> AgentFactory:
    """Import the backend's module and find its factory; a plugin that cannot be loaded is a one-line error."""
    module_name, _, attribute = backend.target.partition(":")
    try:
        found: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
        if not callable(found):
            raise TypeError(f"{backend.target} is a {type(found).__name__}, not a factory")
    except Exception as exc:
        if not backend.plugin:
            raise
        raise RalphError(f"{backend.label} cannot be loaded: {_said(exc)}") from None
    return cast("AgentFactory", found)


def _said(exc: BaseException) -> str:
    """An exception as one line: its type and message."""
    text = one_line(str(exc), 300)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load(target: str) -> Any:
    """What "module:name" names, the module imported now."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
