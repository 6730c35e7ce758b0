"""Google's Gemini CLI as a backend: `gemini -p "" --output-format stream-json --skip-trust [-m MODEL]
--approval-mode auto_edit`, the prompt on stdin.

Gemini reads its prompt from stdin and appends `-p`'s text to it after a blank line; `-p ""` adds nothing, so the
prompt is stdin exactly and never in argv (`-p` itself is what makes a run non-interactive). `--skip-trust`
trusts the project folder for this run: without it an untrusted folder drops the approval mode back to
`default`. `permissions` picks the approval mode: ask `default`, edits `auto_edit`, and all (only ever because
the user asked) `yolo`; in a non-interactive run what would need approval is refused, so under `default` and
`auto_edit` the CLI keeps its shell tool from the model altogether.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ralphloop.agents.accounts import account_of
from ralphloop.agents.executable import locate
from ralphloop.agents.gemini.parser import GeminiStreamParser
from ralphloop.agents.sandbox_vendors import gemini_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths

APPROVAL_MODES = {"ask": "default", "edits": "auto_edit", "all": "yolo"}
# The variables Gemini CLI takes an API key from: the Gemini API's, then Vertex AI express mode's.
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def make(settings: Settings, paths: FeaturePaths) -> GeminiAgent:
    """The registry's factory for `--agent gemini`."""
    return GeminiAgent(settings)


class GeminiAgent(AgentDefaults):
    """Google's Gemini CLI, non-interactive (`gemini -p`)."""

    name = "gemini"

    def __init__(self, settings: Settings) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(
            settings, "gemini", "gemini", "the Gemini CLI", "npm install -g @google/gemini-cli"
        )
        self.executable = chosen
        self.permissions: str = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        self.account = account(os.environ)
        self.sandbox = gemini_needs(os.environ)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-p", "", "--output-format", "stream-json", "--skip-trust")
        if request.model:
            argv += ("-m", request.model)
        # yolo only ever because the user asked for it (permissions: all).
        argv += ("--approval-mode", APPROVAL_MODES.get(self.permissions, "default"))
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> GeminiStreamParser:
        # in ralph's sandbox the CLI keeps its session file in the box's home
        home = Path(request.home, ".gemini") if request.home else config_folder(os.environ)
        return GeminiStreamParser(request.started_at, model=request.model, gemini_home=home)


def account(env: Mapping[str, str]) -> str:
    """Which credentials a run spends (agents/accounts.py): a key variable's hash, else the CLI's login folder."""
    return account_of(env, KEY_VARIABLES, str(config_folder(env)))


def config_folder(env: Mapping[str, str]) -> Path:
    """Where Gemini CLI keeps its settings and login: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`."""
    return Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home()) / ".gemini"
