"""What the multi-provider CLIs need inside ralph's sandbox (issue 35): aider (through litellm) and opencode (through
the AI SDK) reach whichever provider the model names, so each declares the common providers' key variables,
address variables and hosts. Another provider's host (Bedrock, Azure, a local server) and the variable its key is
in are the user's to let in: `sandbox.allow_hosts`, `sandbox.env`.

Checked against aider 0.86.2 (aider/main.py, aider/models.py, litellm's get_secret names) and opencode 1.18.33 (its
binary's Global paths, Auth service and provider catalogue).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from ralphloop.agents.sandbox_needs import api_hosts
from ralphloop.core.sandbox import SandboxNeeds


class Provider(NamedTuple):
    """A provider both CLIs reach: its key variables, and its API's hosts when no address variable is set."""

    keys: tuple[str, ...]
    hosts: tuple[str, ...]


PROVIDERS: Final[Mapping[str, Provider]] = {
    "openai": Provider(("OPENAI_API_KEY",), ("api.openai.com:443",)),
    "anthropic": Provider(("ANTHROPIC_API_KEY",), ("api.anthropic.com:443",)),
    "gemini": Provider(
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"), ("generativelanguage.googleapis.com:443",)
    ),
    "openrouter": Provider(("OPENROUTER_API_KEY",), ("openrouter.ai:443",)),
    "deepseek": Provider(("DEEPSEEK_API_KEY",), ("api.deepseek.com:443",)),
    "groq": Provider(("GROQ_API_KEY",), ("api.groq.com:443",)),
    "mistral": Provider(("MISTRAL_API_KEY",), ("api.mistral.ai:443",)),
    "xai": Provider(("XAI_API_KEY",), ("api.x.ai:443",)),
}
# The address variables litellm reads for each (`get_secret`): an OpenAI-compatible server, a gateway, a test's fake.
_AIDER_ADDRESSES: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
    "gemini": ("GEMINI_API_BASE",),
    "openrouter": ("OPENROUTER_API_BASE",),
    "deepseek": ("DEEPSEEK_API_BASE",),
    "groq": ("GROQ_API_BASE",),
    "mistral": ("MISTRAL_API_BASE",),
    "xai": ("XAI_API_BASE",),
}
# aider's own settings as variables (every option has an AIDER_ one; these choose the model and its credentials)
_AIDER_ENV: Final = (
    "AIDER_MODEL",
    "AIDER_WEAK_MODEL",
    "AIDER_EDITOR_MODEL",
    "AIDER_API_KEY",
    "AIDER_OPENAI_API_KEY",
    "AIDER_ANTHROPIC_API_KEY",
    "AIDER_OPENAI_API_BASE",
    "LITELLM_LOCAL_MODEL_COST_MAP",  # litellm reads its own price table instead of downloading it at import
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
)
# aider's and litellm's model table (context windows, prices), downloaded once a day into ~/.aider/caches
_AIDER_TABLE_HOST: Final = "raw.githubusercontent.com:443"


def aider_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """aider: the providers' keys and addresses (an address variable replaces its provider's hosts), its settings
    files in the home (~/.aider.conf.yml, its model settings and metadata) and the OpenRouter key its OAuth login
    keeps in ~/.aider/oauth-keys.env (a key, never refreshed). ~/.env is left out: it may hold anything of the
    user's; aider's .env in the repository is in the worktree."""
    addresses = tuple(name for names in _AIDER_ADDRESSES.values() for name in names)
    hosts = [
        host
        for name, provider in PROVIDERS.items()
        for host in api_hosts(environ, _AIDER_ADDRESSES[name], provider.hosts)
    ]
    return SandboxNeeds(
        env=(*_keys(), *addresses, *_AIDER_ENV),
        home_files=(
            ".aider.conf.yml",
            ".aider.model.settings.yml",
            ".aider.model.metadata.json",
            ".aider/oauth-keys.env",
        ),
        hosts=tuple(dict.fromkeys((*hosts, _AIDER_TABLE_HOST))),
        login_env=_keys(),
        login_hint="aider: set the provider's API key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)",
        declared=True,
    )


# The address variables the AI SDK's providers read (opencode's own catalogue gives the others' addresses).
_OPENCODE_ADDRESSES: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("OPENAI_BASE_URL",),
    "anthropic": ("ANTHROPIC_BASE_URL",),
}
_OPENCODE_ENV: Final = (
    "OPENCODE_API_KEY",  # OpenCode Zen
    "OPENCODE_AUTH_CONTENT",  # auth.json's content: opencode then reads no auth.json
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_MODELS_URL",
    "OPENCODE_DISABLE_MODELS_FETCH",
    "OPENCODE_DISABLE_AUTOUPDATE",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
    "OPENCODE_DISABLE_LSP_DOWNLOAD",
    "OPENCODE_DISABLE_SHARE",
    "OPENCODE_DISABLE_CLAUDE_CODE",
    "NODE_EXTRA_CA_CERTS",
)
_OPENCODE_AUTH: Final = ".local/share/opencode/auth.json"
# Zen, and ChatGPT's login (opencode's built-in OpenAI login: its token endpoint, the Codex backend)
_OPENCODE_HOSTS: Final = ("opencode.ai:443", "auth.openai.com:443", "chatgpt.com:443")


def opencode_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """opencode: the providers' keys and addresses, its config (opencode.json under $XDG_CONFIG_HOME/opencode, else
    ~/.config/opencode) and its login (auth.json under $XDG_DATA_HOME/opencode, else ~/.local/share/opencode:
    opencode rewrites it when it refreshes an OAuth login, ChatGPT's refresh token used once). At start it fetches
    its model catalogue from models.opencode.ai (OPENCODE_MODELS_URL; none with OPENCODE_DISABLE_MODELS_FETCH) and
    falls back on the one it ships. A provider opencode.json names is the user's to let in."""
    hosts = [
        host
        for name, provider in PROVIDERS.items()
        for host in api_hosts(environ, _OPENCODE_ADDRESSES.get(name, ()), provider.hosts)
    ]
    if not environ.get("OPENCODE_DISABLE_MODELS_FETCH", "").strip():
        hosts += api_hosts(environ, ("OPENCODE_MODELS_URL",), ("models.opencode.ai:443",))
    addresses = tuple(name for names in _OPENCODE_ADDRESSES.values() for name in names)
    return SandboxNeeds(
        env=(*_keys(), *addresses, *_OPENCODE_ENV),
        home_files=(
            ".config/opencode/opencode.json",
            ".config/opencode/opencode.jsonc",
            ".config/opencode/config.json",
            _OPENCODE_AUTH,
        ),
        config_dirs=(("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")),
        hosts=tuple(dict.fromkeys((*hosts, *_OPENCODE_HOSTS))),
        logins=(_OPENCODE_AUTH,),
        # the provider key variables are no such login: auth.json may hold another provider's OAuth login, which a
        # loop would refresh and the user's own copy lose
        login_env=("OPENCODE_AUTH_CONTENT",),
        login_hint="opencode: put the provider's API key in its variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) "
        "and set OPENCODE_AUTH_CONTENT='{}' (auth.json unused), or to auth.json's API-key entries",
        declared=True,
    )


def _keys() -> tuple[str, ...]:
    return tuple(dict.fromkeys(key for provider in PROVIDERS.values() for key in provider.keys))
