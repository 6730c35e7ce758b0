"""The opencode CLI as a backend: `opencode run --format json --print-logs --log-level ERROR --title TITLE
[-m PROVIDER/MODEL] [--auto]`, the prompt on stdin.

- The prompt: `opencode run` takes a message from argv, but with none there it reads a piped stdin whole as the
  message (1.18.33's run command: `message ?? stdin`), so the prompt never reaches argv.
- `PWD` is set to the project: opencode works in `$PWD` (falling back to its working directory), and ralph's
  own `PWD` may name another folder.
- `--title` gives the session ralph's name: without it opencode asks the model for a title first, a request of
  its own that costs tokens; with it `opencode session list` shows which iteration a session was.
- `--print-logs --log-level ERROR` puts opencode's error log lines on stderr: what a silent retry waits on, and
  what an "Unexpected server error" event was (log_lines.py). One line a failed request, so a retry that waits
  for hours still goes silent, and the idle timeout (IDLE_TIMEOUT_S, its default here) ends it.
- `permissions` becomes opencode's own `permission` rules, in `$OPENCODE_PERMISSION` (a JSON object opencode
  merges over its config files): see PERMISSION_RULES. `all` adds `--auto` (approve what would be asked), only
  ever because the user asked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Final

from ralphloop.agents.executable import locate
from ralphloop.agents.opencode import session_db
from ralphloop.agents.opencode.parser import OpencodeJsonParser
from ralphloop.agents.sandbox_providers import opencode_needs
from ralphloop.agents.text import agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.project.paths import FeaturePaths
from ralphloop.words.textsafe import one_line

# opencode waits out a provider's `retry-after` in silence, for hours if it says so (a spent plan): ten minutes
# without a line ends it (`process.idle_timeout_minutes` in the config wins).
IDLE_TIMEOUT_S: Final = 600.0
# ralph's permissions as opencode rules. Each sets the "*" pattern of a permission: opencode merges this over the
# user's config key by key, so a "*" there is replaced in place and the user's own narrower patterns after it
# still apply ("bash": {"*": "ask", "git *": "allow"} keeps git allowed under `edits`). "deny" rather than "ask":
# `opencode run` rejects an ask and stops the whole session; a denied tool is not offered to the model at all, and
# a denied call is an error the agent can work around. `edit` covers opencode's edit, write and apply_patch tools.
PERMISSION_RULES: Final[Mapping[str, Mapping[str, Mapping[str, str]]]] = {
    "ask": {"edit": {"*": "deny"}, "bash": {"*": "deny"}},
    "edits": {"edit": {"*": "allow"}, "bash": {"*": "deny"}},
    "all": {"edit": {"*": "allow"}, "bash": {"*": "allow"}},
}
# The API-key variable opencode reads for a provider (the account a run spends, for failover).
KEY_VARIABLES: Final[Mapping[str, str]] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GOOGLE_GENERATIVE_AI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "groq": "GROQ_API_KEY",
    "xai": "XAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "opencode": "OPENCODE_API_KEY",
}


def make(settings: Settings, paths: FeaturePaths) -> OpencodeAgent:
    """The registry's factory for `--agent opencode`."""
    return OpencodeAgent(settings)


class OpencodeAgent(AgentDefaults):
    """opencode, non-interactive (`opencode run`)."""

    name = "opencode"

    def __init__(self, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        model = settings.agent.model
        if model is not None and not _provider_model(model):
            raise RalphError(
                f"{settings.source('model')}: opencode names a model provider/model (e.g. "
                f"anthropic/claude-sonnet-4-5; `opencode models` lists them), not {one_line(model, 80)!r}"
            )
        # Not on PATH: make_agent refuses the run with this; a dry run, which starts nothing, only says it.
        chosen, self.missing = locate(settings, "opencode", "opencode", "opencode", "npm install -g opencode-ai")
        self.executable = chosen
        self.permissions: str = settings.agent.permissions
        self.commits = self.permissions == "all"  # below `all` it cannot run git: ralph commits for it
        self.account = account(model, env)
        self.database = session_db.database_path(env)
        self.sandbox = opencode_needs(env)

    def command(self, request: AgentRequest) -> AgentCommand:
        title = one_line(f"ralph {request.task_id} iteration {request.iteration}", 100)
        argv: tuple[str, ...] = (self.executable, "run", "--format", "json", "--print-logs", "--log-level", "ERROR")
        argv += ("--title", title)
        if request.model:
            argv += ("-m", request.model)
        if self.permissions == "all":
            argv += ("--auto",)  # only ever because the user asked for it
        env = {
            **agent_env(request),
            "PWD": request.project_root,
            "OPENCODE_PERMISSION": json.dumps(PERMISSION_RULES[self.permissions]),
        }
        stdin = request.prompt.encode("utf-8")
        return AgentCommand(argv=argv, env=env, stdin=stdin, idle_timeout_s=IDLE_TIMEOUT_S)

    def parser(self, request: AgentRequest) -> OpencodeJsonParser:
        # in ralph's sandbox opencode keeps its database in the box's home (OPENCODE_DB does not reach it)
        database = session_db.database_path({"HOME": request.home}) if request.home else self.database
        return OpencodeJsonParser(request.started_at, model=request.model, database=database)


def account(model: str | None, env: Mapping[str, str]) -> str:
    """The credential a run spends, without the secret: "api-key:" and the first 12 hex digits of the key's
    SHA-256 when the model's provider has its API-key variable set (every such variable set, when the model is
    opencode's own choice), else "login:" and opencode's data folder, whose auth.json `opencode auth login` fills."""
    provider = model.partition("/")[0] if model else ""
    if provider:
        names = [KEY_VARIABLES[provider]] if provider in KEY_VARIABLES else []
    else:
        names = sorted(KEY_VARIABLES.values())
    keys = [env[name] for name in names if env.get(name, "").strip()]
    if keys:
        return "api-key:" + hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:12]
    return f"login:{session_db.data_dir(env)}"


def _provider_model(model: str) -> bool:
    provider, _, name = model.partition("/")
    return bool(provider.strip() and name.strip())
