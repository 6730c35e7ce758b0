"""Which account an aider run spends, named without its secret (failover tells accounts apart by it).

Aider uses the API key of the model's provider from the environment (litellm's variable names), or, with no
model given, the first key it finds in the order of aider 0.86.2's onboarding.try_to_select_default_model. Keys
that aider reads from `.aider.conf.yml` or `.env` files are not seen here: such a run is named by aider's folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from ralphloop.agents.accounts import account_of

# A model's provider prefix ("openai/gpt-4o") → the variable litellm reads its key from.
KEY_BY_PROVIDER: Final[Mapping[str, str]] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "xai": "XAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "azure": "AZURE_API_KEY",
}
# A bare model name's start → its provider's variable (aider's aliases sonnet/haiku/opus are Claude models).
_KEY_BY_NAME: Final = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-", "4o"), "OPENAI_API_KEY"),
    (("claude", "sonnet", "haiku", "opus"), "ANTHROPIC_API_KEY"),
    (("gemini", "flash"), "GEMINI_API_KEY"),
    (("deepseek", "r1"), "DEEPSEEK_API_KEY"),
    (("grok",), "XAI_API_KEY"),
)
# Without a model, aider picks one by the first of these that is set.
DEFAULT_ORDER: Final = (
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
)


def key_variable(model: str | None, environ: Mapping[str, str]) -> str | None:
    """The variable holding the key aider will use for `model` (None: the model names no provider known here)."""
    if not model:
        return next((name for name in DEFAULT_ORDER if environ.get(name)), None)
    provider, slash, _ = model.partition("/")
    if slash:
        return KEY_BY_PROVIDER.get(provider.lower())
    bare = model.lower()
    return next((variable for starts, variable in _KEY_BY_NAME if bare.startswith(starts)), None)


def account(model: str | None, environ: Mapping[str, str]) -> str:
    """ "api-key:" and the first 12 hex digits of the key's SHA-256 when its variable is set, else "login:" and
    aider's own folder (its OpenRouter login, `~/.aider/oauth-keys.env`)."""
    variable = key_variable(model, environ)
    home = environ.get("HOME") or os.path.expanduser("~")
    return account_of(environ, (variable,) if variable else (), os.path.join(home, ".aider"))
