"""Cursor's CLI as a backend: `cursor-agent -p --output-format stream-json --trust [--model M] [--force | --mode
ask] PROMPT`, where PROMPT is one short sentence naming the prompt file (request.prompt_file).

Cursor documents the prompt as an argument only (no stdin), and an argument of 100 KB would show in `ps` and near
the kernel's limit: the prompt stays in its file, which the agent reads first. `--trust` (parameters reference:
trust the workspace without prompting) because nobody is there to answer the trust question of a print-mode run.
`permissions`: ask is `--mode ask` (read-only), edits passes nothing (Cursor's headless docs: without `--force`
changes are only proposed, not applied, unless Cursor's own permission rules allow them), and all (only ever
because the user asked) is `--force`. Everything here is from Cursor's documentation; see docs/agents.md.
"""

from __future__ import annotations

import os

from ralphloop.agents.accounts import account_of
from ralphloop.agents.cursor.parser import CursorStreamParser
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_vendors import CURSOR
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths


def make(settings: Settings, paths: FeaturePaths) -> CursorAgent:
    """The registry's factory for `--agent cursor`."""
    return CursorAgent(settings)


def prompt_pointer(prompt_file: str) -> str:
    """The whole argv prompt: where the real one is (a path, never the prompt's text)."""
    return (
        f"Your instructions for this run are in the file {prompt_file}. Read that whole file first, then do "
        "exactly what it says."
    )


class CursorAgent(AgentDefaults):
    """Cursor's terminal agent, in print mode."""

    name = "cursor"
    sandbox = CURSOR  # from its documentation: no variable changes what it needs

    def __init__(self, settings: Settings) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(
            settings,
            "cursor",
            "cursor-agent",
            "Cursor's CLI (cursor-agent)",
            "curl https://cursor.com/install -fsS | bash",
            "; newer installs name it `agent`",
        )
        self.executable = chosen
        self.permissions = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        # Which account the runs spend (failover): an API key in the environment, else the CLI's own login.
        self.account = account_of(
            os.environ, ("CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"), os.path.join(os.path.expanduser("~"), ".cursor")
        )

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-p", "--output-format", "stream-json", "--trust")
        if request.model:
            argv += ("--model", request.model)
        if self.permissions == "all":
            argv += ("--force",)  # only ever because the user asked for it
        elif self.permissions == "ask":
            argv += ("--mode", "ask")
        argv += (prompt_pointer(request.prompt_file),)
        return AgentCommand(argv=argv, env=agent_env(request), stdin=b"")

    def parser(self, request: AgentRequest) -> CursorStreamParser:
        return CursorStreamParser(model=request.model)
