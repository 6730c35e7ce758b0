"""aider as a backend: `aider --message-file PROMPT --yes-always --no-pretty … [--model M]`, the prompt read
from ralph's prompt file (never in argv), stdin empty.

Aider has no tool sandbox: it writes the model's edits and asks about everything else (running a shell command
the model suggests, adding a file, opening a URL). In a loop nobody answers, and aider takes an unanswered
question (end of input) as its default, which is yes, shell commands included. So ralph always passes
`--yes-always`: it answers yes to every question but the shell command's, which needs an explicit yes and gets
a no. `permissions`: ask adds `--dry-run` (aider shows the edits it would make and writes none), edits (the
default) applies them, and all is the same as edits: aider 0.86.2 has no flag that runs a suggested command
without a person typing y, so there is nothing more to allow (and `--no-suggest-shell-commands` keeps the model
from counting on commands that never run).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from ralphloop.agents.aider.account import account
from ralphloop.agents.aider.parser import AiderTextParser
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_providers import aider_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths

# Every run: plain output, no question that would change the user's machine (an upgrade, analytics, release
# notes), no URL in the prompt fetched, no commit by aider (ralph's own git.auto_commit commits accepted work:
# aider's commits would land before ralph's checks, and their messages cost a request aider does not report),
# and the user's .gitignore left alone (RUNTIME_FILES).
FLAGS: Final = (
    "--yes-always",
    "--no-pretty",
    "--no-fancy-input",
    "--no-check-update",
    "--no-show-release-notes",
    "--no-analytics",
    "--no-detect-urls",
    "--no-suggest-shell-commands",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-gitignore",
)
# What aider keeps in the repository's top folder (its chat and input history, its repo-map cache): not the
# work, so ralph keeps it out of git through .git/info/exclude (run_cmd), as aider would through .gitignore,
# but without a change to the user's .gitignore that an undone attempt would take back (and bare the cache).
RUNTIME_FILES: Final = ("/.aider*",)
# Under --yes-always aider opens the URLs it offers (an error's documentation, a model warning's) in a browser:
# a run with nobody at the screen opens none. Python's webbrowser runs $BROWSER with the URL, `true` ignores it.
NO_BROWSER: Final = {"BROWSER": "true"}


def make(settings: Settings, paths: FeaturePaths) -> AiderAgent:
    """The registry's factory for `--agent aider`."""
    return AiderAgent(settings)


class AiderAgent(AgentDefaults):
    """Aider (aider-chat), one `--message-file` request per iteration."""

    name = "aider"
    runtime_files = RUNTIME_FILES

    def __init__(self, settings: Settings, environ: Mapping[str, str] = os.environ) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(
            settings, "aider", "aider", "aider", "python -m pip install aider-chat, or pipx install aider-chat"
        )
        self.executable = chosen
        self.permissions = settings.agent.permissions
        self.commits = False  # ralph passes --no-auto-commits: it commits for aider
        # Which credentials a run spends (failover): the key's fingerprint, never the key.
        self.account = account(settings.agent.model, environ)
        self.sandbox = aider_needs(environ)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "--message-file", request.prompt_file, *FLAGS)
        if self.permissions == "ask":
            argv += ("--dry-run",)
        if request.model:
            argv += ("--model", request.model)
        return AgentCommand(argv=argv, env={**agent_env(request), **NO_BROWSER}, stdin=b"")

    def parser(self, request: AgentRequest) -> AiderTextParser:
        return AiderTextParser(request.started_at, model=request.model)
