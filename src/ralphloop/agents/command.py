"""Any CLI as an agent: the prompt on stdin, the RALPH_* environment, stdout analysed."""

from __future__ import annotations

import shlex
import shutil

from ralphloop.agents.sandbox_needs import PLAIN
from ralphloop.agents.text import TextOutputParser, agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths


def make(settings: Settings, paths: FeaturePaths) -> CommandAgent:
    """The registry's factory for `--agent command` (what `--agent-cmd CMD` chooses)."""
    return CommandAgent(required_command(settings), label=settings.source("agent_command"))


def required_command(settings: Settings) -> str:
    if not settings.agent.command:
        raise RalphError("--agent command needs a command: pass --agent-cmd CMD or set agent.command in config")
    return settings.agent.command


def split_command(command: str, label: str) -> list[str]:
    """The command's words, split like a shell would; an error naming `label` when it cannot be, or is empty."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise RalphError(f"{label}: cannot split {command!r}: {exc}") from None
    if not argv:
        raise RalphError(f"{label}: the command is empty")
    return argv


class CommandAgent(AgentDefaults):
    """`--agent-cmd "python3 my_agent.py"`: split like a shell would, but never run through one."""

    name = "command"
    sandbox = PLAIN  # the user's own command: what it needs more, they let in (sandbox.env, sandbox.allow_hosts)

    def __init__(self, command: str, label: str = "--agent-cmd") -> None:
        argv = split_command(command, label)
        self.missing: str | None = None  # make_agent refuses the run with it; a dry run only says it
        if shutil.which(argv[0]) is None:
            self.missing = f"{label}: {argv[0]!r} is not an executable on PATH or a path to one"
        self.argv = tuple(argv)

    def command(self, request: AgentRequest) -> AgentCommand:
        return AgentCommand(argv=self.argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> TextOutputParser:
        return TextOutputParser(request)
