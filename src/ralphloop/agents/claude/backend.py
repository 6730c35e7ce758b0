"""Claude Code as a backend: `claude -p --output-format stream-json --verbose`, the prompt on stdin.

The flags come from the user's `claude:` settings and `permissions` (ask: none, edits: `--permission-mode
acceptEdits`, all: `--dangerously-skip-permissions`); the output is read by parser.py as it streams.
"""

from __future__ import annotations

import os

from ralphloop.agents.accounts import account_of
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.claude.settings import ClaudeSettings
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_needs import claude_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths


def make(settings: Settings, paths: FeaturePaths) -> ClaudeAgent:
    """The registry's factory for `--agent claude`."""
    return ClaudeAgent(settings)


class ClaudeAgent(AgentDefaults):
    """The default agent."""

    name = "claude"

    def __init__(self, settings: Settings, executable: str | None = None) -> None:
        claude: ClaudeSettings = settings.claude
        found, self.missing = locate(
            settings,
            "claude",
            "claude",
            "Claude Code",
            "npm install -g @anthropic-ai/claude-code",
            "; or choose another agent: --agent-cmd CMD, or --agent scripted",
        )
        chosen = executable or found
        if executable is not None:  # a test's stand-in: never refused
            self.missing = None
        # claude.dangerously_skip_permissions is this agent's own `all`, only ever because the user asked for it
        self.permissions = "all" if claude.skip_permissions else settings.agent.permissions
        asked_by = settings.source("skip_permissions" if claude.skip_permissions else "permissions")
        # It can commit when it may run git: every tool allowed, or Bash (or Bash(git ...)) in allowed_tools.
        git_allowed = any(tool == "Bash" or tool.startswith(("Bash(git", "Bash(*")) for tool in claude.allowed_tools)
        self.commits = self.permissions == "all" or git_allowed
        if self.permissions == "all" and _is_root() and not os.environ.get("IS_SANDBOX"):
            raise RalphError(
                f"{asked_by}: Claude Code refuses --dangerously-skip-permissions when "
                "run as root. Run ralph as a normal user, or, only inside a throwaway container or VM, "
                "set IS_SANDBOX=1; or leave the flag out and allow tools with claude.allowed_tools"
            )
        self.executable = chosen
        self.settings = claude
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
        self.account = account_of(os.environ, ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"), home)
        self.sandbox = claude_needs(os.environ)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-p", "--output-format", "stream-json", "--verbose")
        if request.model:
            argv += ("--model", request.model)
        claude = self.settings
        if self.permissions == "all":
            argv += ("--dangerously-skip-permissions",)  # only ever because the user asked for it
        elif self.permissions == "edits":
            argv += ("--permission-mode", "acceptEdits")
        if claude.allowed_tools:
            argv += ("--allowedTools", ",".join(claude.allowed_tools))
        if claude.max_turns:
            argv += ("--max-turns", str(claude.max_turns))
        if claude.append_system_prompt:
            argv += ("--append-system-prompt", claude.append_system_prompt)
        if claude.resume and request.resume_session:
            argv += ("--resume", request.resume_session)
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> StreamJsonParser:
        return StreamJsonParser(request.started_at, max_turns=self.settings.max_turns)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
