"""Amp as a backend: `amp -x --stream-json --no-ide [--mode MODE] [--dangerously-allow-all]`, the prompt on stdin.

Amp has no model flag for ordinary accounts (its hidden `--model` answers "The --model flag is not enabled for your
account"): its *mode* (low, medium, high, ultra, or a plugin mode) picks the model, so ralph's `--model` is passed
as `--mode`. `--no-ide`: the prompt is ralph's alone, not joined by an open editor's file and selection.
`permissions`: edits passes nothing (Amp's own rules allow file edits and its allowlisted commands; another command
needs an approval that stream-json mode refuses, ending the run); all (only ever because the user asked) passes the
hidden `--dangerously-allow-all`; ask cannot be honoured (Amp has no read-only switch), so the run is refused.
"""

from __future__ import annotations

import os

from ralphloop.agents.accounts import account_of
from ralphloop.agents.amp.parser import AmpStreamParser
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_vendors import amp_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths


def make(settings: Settings, paths: FeaturePaths) -> AmpAgent:
    """The registry's factory for `--agent amp`."""
    return AmpAgent(settings)


class AmpAgent(AgentDefaults):
    """Sourcegraph's Amp CLI, in execute mode."""

    name = "amp"

    def __init__(self, settings: Settings) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(settings, "amp", "amp", "the Amp CLI", "npm install -g @sourcegraph/amp")
        self.permissions = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        if self.permissions == "ask":
            raise RalphError(
                f"{settings.source('permissions')}: Amp cannot run with permissions: ask: its execute mode has no "
                "read-only switch (its own rules let the agent edit files). Use permissions: edits (Amp's "
                "amp.permissions rules decide), or another agent"
            )
        self.executable = chosen
        # Which account the runs spend (failover): AMP_API_KEY, else the login Amp keeps in its data folder.
        data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        self.account = account_of(os.environ, ("AMP_API_KEY",), os.path.join(data, "amp"))
        self.sandbox = amp_needs(os.environ)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-x", "--stream-json", "--no-ide")
        if request.model:
            argv += ("--mode", request.model)
        if self.permissions == "all":
            argv += ("--dangerously-allow-all",)  # only ever because the user asked for it
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> AmpStreamParser:
        return AmpStreamParser(request.started_at)
