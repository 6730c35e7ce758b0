"""The Codex CLI as a backend: `codex exec --json --skip-git-repo-check [-m MODEL] -s workspace-write -`,
the prompt on stdin, run with TZ=UTC so that the reset time of its usage-limit sentence is read exactly.

`permissions` picks the sandbox: ask `-s read-only`, edits `-s workspace-write`, and all (only ever because the
user asked) `--dangerously-bypass-approvals-and-sandbox`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ralphloop.agents.accounts import account_of
from ralphloop.agents.codex.parser import CodexJsonParser
from ralphloop.agents.codex.session_file import codex_home
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_needs import codex_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths


def make(settings: Settings, paths: FeaturePaths) -> CodexAgent:
    """The registry's factory for `--agent codex`."""
    return CodexAgent(settings)


class CodexAgent(AgentDefaults):
    """OpenAI's Codex CLI, non-interactive (`codex exec`)."""

    name = "codex"

    def __init__(self, settings: Settings) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(settings, "codex", "codex", "the Codex CLI", "npm install -g @openai/codex")
        self.executable = chosen
        self.permissions = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        self.account = account_of(os.environ, ("CODEX_API_KEY", "OPENAI_API_KEY"), str(codex_home(os.environ)))
        self.sandbox = codex_needs(os.environ)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "exec", "--json", "--skip-git-repo-check")
        if request.model:
            argv += ("-m", request.model)
        if self.permissions == "all":
            argv += ("--dangerously-bypass-approvals-and-sandbox",)  # only ever because the user asked for it
        elif self.permissions == "edits" and request.home:
            argv += ("-s", "danger-full-access")  # in ralph's sandbox: it holds the agent; Codex's own would nest
        else:
            argv += ("-s", "workspace-write" if self.permissions == "edits" else "read-only")
        env = {**agent_env(request), "TZ": "UTC"}
        return AgentCommand(argv=(*argv, "-"), env=env, stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> CodexJsonParser:
        home = Path(request.home, ".codex") if request.home else codex_home(os.environ)  # where its session files are
        return CodexJsonParser(request.started_at, model=request.model, codex_home=home)
