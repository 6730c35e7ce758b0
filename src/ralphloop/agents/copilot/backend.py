"""The GitHub Copilot CLI as a backend: `copilot --output-format json [--model M] <permissions>
--usage-output-file FILE`, the prompt on stdin (without `-p` Copilot 1.0.102 reads piped stdin as the prompt),
run with TZ=UTC so that any clock time in a limit message is read exactly.

`permissions` picks the tool approvals (in a prompt run nobody can approve a tool, so what is not allowed is
refused): ask passes none (Copilot still runs read-only tools and read-only shell commands), edits
`--allow-tool write` (its file tools and shell redirections inside the allowed folders; other shell commands
are refused), and all (only ever because the user asked) `--allow-all-tools`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import SplitResult, urlsplit

from ralphloop.agents.accounts import account_of
from ralphloop.agents.copilot import usage_file
from ralphloop.agents.copilot.parser import CopilotJsonParser
from ralphloop.agents.executable import locate
from ralphloop.agents.sandbox_vendors import copilot_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths

_PERMISSION_FLAGS = {"ask": (), "edits": ("--allow-tool", "write"), "all": ("--allow-all-tools",)}
# Where Copilot takes its credential from, in its own order of precedence (`copilot help environment`,
# `copilot help providers`): a custom provider's token or key, else a GitHub token, else its stored login.
_PROVIDER_KEYS = ("COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_API_KEY")
_GITHUB_TOKENS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


def make(settings: Settings, paths: FeaturePaths) -> CopilotAgent:
    """The registry's factory for `--agent copilot`."""
    return CopilotAgent(settings)


class CopilotAgent(AgentDefaults):
    """GitHub's Copilot CLI, non-interactive (prompt mode)."""

    name = "copilot"

    def __init__(self, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(
            settings, "copilot", "copilot", "the GitHub Copilot CLI", "npm install -g @github/copilot"
        )
        self.executable = chosen
        self.permissions: str = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        self.account = account(os.environ if env is None else env)
        self.sandbox = copilot_needs(os.environ if env is None else env)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "--output-format", "json")
        if request.model:
            argv += ("--model", request.model)
        argv += _PERMISSION_FLAGS.get(self.permissions, ())  # "all" only ever because the user asked for it
        path = usage_file.usage_path(request.prompt_file)
        if path is not None:
            argv += ("--usage-output-file", path)
        env = {**agent_env(request), "TZ": "UTC"}
        return AgentCommand(argv=argv, env=env, stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> CopilotJsonParser:
        path = usage_file.usage_path(request.prompt_file)
        usage_file.forget(path)  # a file an earlier run of this iteration left is not this run's
        return CopilotJsonParser(request.started_at, model=request.model, usage_path=path)


def account(env: Mapping[str, str]) -> str:
    """Which account a run spends, without the secret: "api-key:" and the first 12 hex digits of the SHA-256 of
    the credential variable Copilot uses (a custom provider's key or token when COPILOT_PROVIDER_BASE_URL is
    set, else a GitHub token), "provider:" and a keyless provider's host and path, else "login:" and Copilot's
    config folder (its stored login)."""
    provider = env.get("COPILOT_PROVIDER_BASE_URL")
    home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")
    named = account_of(env, _PROVIDER_KEYS if provider else _GITHUB_TOKENS, home)
    if provider and named.startswith("login:"):  # a local provider without a key (Ollama): the endpoint is the account
        parts = urlsplit(provider)
        return f"provider:{parts.hostname or ''}{f':{parts.port}' if _port(parts) else ''}{parts.path}"
    return named


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:
        return None
