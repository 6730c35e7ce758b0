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

    if not settings.agent_command:
        raise RalphError("--agent command needs a command: pass --agent-cmd CMD or set agent.command in config")
    return CommandAgent(settings.agent_command, label=settings.source("agent_command"))


def _scripted(settings: Settings, paths: FeaturePaths) -> Agent:
    from ralphloop.agents.scripted import DEFAULT_SCRIPT, ScriptedAgent

    return ScriptedAgent(settings.scripted_script or os.path.join(paths.dir, DEFAULT_SCRIPT))


def _claude(settings: Settings, paths: FeaturePaths) -> Agent:
    from ralphloop.agents.claude.backend import ClaudeAgent

    return ClaudeAgent(settings)


AGENTS: dict[str, Callable[[Settings, FeaturePaths], Agent]] = {
    "claude": _claude,
    "command": _command,
    "scripted": _scripted,
}


def make_agent(settings: Settings, paths: FeaturePaths) -> Agent:
    """The backend `settings.agent` names, or a one-line error listing the known ones."""
    factory = AGENTS.get(settings.agent)
    if factory is None:
        raise RalphError(
            f"{settings.source('agent')}: unknown agent {settings.agent!r} (known: {', '.join(sorted(AGENTS))})"
        )
    return factory(settings, paths)
