"""What each built-in backend needs inside ralph's sandbox (issue 35; core/sandbox.py's SandboxNeeds): the
variables of its login and its API, the files of its login in the user's home, and its API's hosts (from the
address a variable sets, as the CLI reads it: a test's loopback API is such a host).

Claude Code's, Codex's and a plain command's are here; the multi-provider CLIs' (aider, opencode) are in
sandbox_providers.py, the other vendors' CLIs' (Gemini, Copilot, Amp, Cursor) in sandbox_vendors.py. A backend that
declares nothing runs outside the sandbox, and `--sandbox auto` says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from ralphloop.core.sandbox import SandboxNeeds

_CLAUDE_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_MAX_RETRIES",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "DISABLE_ERROR_REPORTING",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "IS_SANDBOX",
    "NODE_EXTRA_CA_CERTS",
)
_CODEX_ENV = ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "NODE_EXTRA_CA_CERTS")


_CLAUDE_HOSTS = ("api.anthropic.com:443", "platform.claude.com:443", "console.anthropic.com:443")


def claude_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """Claude Code: its key or token, its login files (~/.claude.json, ~/.claude/.credentials.json: where
    CLAUDE_CONFIG_DIR points, if it does), and its API (ANTHROPIC_BASE_URL, else Anthropic's hosts)."""
    return SandboxNeeds(
        env=_CLAUDE_ENV,
        home_files=(".claude.json", ".claude/.credentials.json", ".claude/settings.json"),
        config_dirs=(("CLAUDE_CONFIG_DIR", ".claude"),),
        # the API, and where a subscription login is refreshed (platform.claude.com since 2.1; console before)
        hosts=api_hosts(environ, ("ANTHROPIC_BASE_URL",), _CLAUDE_HOSTS),
        quiet_hosts=("http-intake.logs.us5.datadoghq.com:443", "statsig.anthropic.com:443", "*.sentry.io:443"),
        logins=(".claude/.credentials.json",),
        login_env=("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        login_hint="claude: run `claude setup-token` and set CLAUDE_CODE_OAUTH_TOKEN to the token, or set "
        "ANTHROPIC_API_KEY",
        declared=True,
    )


def codex_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """Codex: its key, its login and config (auth.json, config.toml: where CODEX_HOME points, else ~/.codex), and
    its API (OPENAI_BASE_URL, the providers config.toml names are the user's to allow; else OpenAI's hosts)."""
    return SandboxNeeds(
        env=_CODEX_ENV,
        home_files=(".codex/auth.json", ".codex/config.toml"),
        config_dirs=(("CODEX_HOME", ".codex"),),
        hosts=api_hosts(
            environ, ("OPENAI_BASE_URL",), ("api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443")
        ),
        quiet_hosts=("ab.chatgpt.com:443",),  # its metrics (Statsig's OTLP intake)
        logins=(".codex/auth.json",),
        login_env=("OPENAI_API_KEY", "CODEX_API_KEY"),
        login_hint="codex: set OPENAI_API_KEY (or CODEX_API_KEY) to an API key",
        declared=True,
    )


# A command of the user's own (--agent-cmd) or the scripted demo agent: no login, no API; what it needs more, the
# user lets in (sandbox.env, sandbox.allow_hosts).
PLAIN = SandboxNeeds(declared=True)


def merged(needs: Sequence[SandboxNeeds]) -> SandboxNeeds:
    """A failover chain's: every member's; declared when every member declared its own."""
    return SandboxNeeds(
        env=tuple(dict.fromkeys(name for each in needs for name in each.env)),
        home_files=tuple(dict.fromkeys(path for each in needs for path in each.home_files)),
        config_dirs=tuple(dict.fromkeys(pair for each in needs for pair in each.config_dirs)),
        hosts=tuple(dict.fromkeys(host for each in needs for host in each.hosts)),
        quiet_hosts=tuple(dict.fromkeys(host for each in needs for host in each.quiet_hosts)),
        logins=tuple(dict.fromkeys(path for each in needs for path in each.logins)),
        login_env=tuple(dict.fromkeys(name for each in needs for name in each.login_env)),
        login_hint="; ".join(dict.fromkeys(each.login_hint for each in needs if each.login_hint)),
        declared=all(each.declared for each in needs),
    )


def api_hosts(environ: Mapping[str, str], variables: Sequence[str], defaults: Sequence[str]) -> tuple[str, ...]:
    """The host:port of the API address a variable sets, else the vendor's own."""
    for variable in variables:
        address = environ.get(variable, "").strip()
        if address:
            try:
                parts = urlsplit(address)
                port = parts.port or (80 if parts.scheme == "http" else 443)
            except ValueError:
                continue
            if parts.hostname:
                return (f"{parts.hostname.lower()}:{port}",)
    return tuple(defaults)
