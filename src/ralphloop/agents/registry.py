"""Agent backends by name; built-in ones go through the same door a plugin would."""

from __future__ import annotations

import os
from collections.abc import Callable

from ralphloop.config import Settings
from ralphloop.errors import RalphError
from ralphloop.paths import FeaturePaths
from ralphloop.protocols import Agent


def _command(settings: Settings, paths: FeaturePaths) -> Agent:
    from ralphloop.agents.command import CommandAgent

    return CommandAgent(_agent_command(settings), label=settings.source("agent_command"))


def _agent_command(settings: Settings) -> str:
    if not settings.agent_command:
        raise RalphError("--agent command needs a command: pass --agent-cmd CMD or set agent.command in config")
    return settings.agent_command


def _scripted(settings: Settings, paths: FeaturePaths) -> Agent:
    from ralphloop.agents.scripted import DEFAULT_SCRIPT, ScriptedAgent

    return ScriptedAgent(settings.scripted_script or os.path.join(paths.dir, DEFAULT_SCRIPT))


def _claude(settings: Settings, paths: FeaturePaths) -> Agent:
    from ralphloop.agents.claude import ClaudeAgent

    return ClaudeAgent(settings)


AGENTS: dict[str, Callable[[Settings, FeaturePaths], Agent]] = {
    "claude": _claude,
    "command": _command,
    "scripted": _scripted,
}


def make_agent(settings: Settings, paths: FeaturePaths) -> Agent:
    """The backend `settings.agent` names, or a one-line error listing the known ones."""
    return _factory(settings)(settings, paths)


def check_agent_settings(settings: Settings, paths: FeaturePaths) -> None:
    """Raise the error `make_agent` would for the settings and the workspace's files alone: an unknown
    name, a command agent's missing or unsplittable command, a scripted agent's script. Whether an
    executable is on PATH is the machine's business, left to `make_agent` (`ralph validate` checks inputs)."""
    _factory(settings)
    if settings.agent == "command":
        from ralphloop.agents.command import split_command

        split_command(_agent_command(settings), settings.source("agent_command"))
    elif settings.agent == "scripted":
        _scripted(settings, paths)  # it only reads and checks the script


def _factory(settings: Settings) -> Callable[[Settings, FeaturePaths], Agent]:
    factory = AGENTS.get(settings.agent)
    if factory is None:
        raise RalphError(
            f"{settings.source('agent')}: unknown agent {settings.agent!r} (known: {', '.join(sorted(AGENTS))})"
        )
    return factory
