"""The real opencode CLI the opencode end-to-end tests drive, pinned, installed once by npm_cli.py, and the private
home that points it at the loopback fake of the OpenAI Chat Completions API (tests/e2e/fake_openai_chat.py).

opencode reads its providers from `$XDG_CONFIG_HOME/opencode/opencode.json`: `opencode_config` names a provider
"fake" built on the AI SDK's OpenAI-compatible package (bundled with opencode 1.18.33, nothing is downloaded)
whose `options.baseURL` is the fake and whose key comes from a variable (`{env:…}`), with the models the fake
serves and their prices (opencode prices each step itself from them). `opencode_env` gives it a private HOME and
XDG folders (its config, its database, its logs), no real credentials, and no downloads: no model catalogue from
models.dev, no default plugins, no update check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat
from tests.e2e.npm_cli import PinnedCli

__all__ = [
    "FAKE_KEY_VARIABLE",
    "MODEL",
    "OPENCODE_VERSION",
    "PRICE",
    "opencode_config",
    "opencode_env",
    "opencode_executable",
]

OPENCODE_VERSION: Final = "1.18.33"
OPENCODE: Final = PinnedCli(
    label="opencode",
    package="opencode-ai",
    version=OPENCODE_VERSION,
    binary="opencode",
    folder="opencode",
    version_ok=lambda printed: printed.strip().splitlines()[-1:] == [OPENCODE_VERSION],
)
FAKE_KEY_VARIABLE: Final = "RALPH_FAKE_CHAT_KEY"
# A model id without "gpt" in it: opencode then offers its edit and write tools (to GPT models, apply_patch).
MODEL: Final = "fake-coder"
# USD per million tokens, as opencode's config takes them.
PRICE: Final = {"input": 2.0, "output": 8.0, "cache_read": 0.5, "cache_write": 2.5}
# Variables that would give opencode real credentials or another configuration.
_DROPPED = ("OPENCODE", "XDG_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "OPENROUTER_", "GROQ_", "XAI_")


def opencode_executable() -> str:
    return OPENCODE.executable()


def opencode_config(fake: FakeOpenAIChat, models: tuple[str, ...] = (MODEL,), model: str = MODEL) -> str:
    """The `opencode.json` that points opencode at `fake`: provider "fake", its models priced at PRICE, `model`
    the default (what opencode uses without `-m`)."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake",
        "options": {"baseURL": fake.url, "apiKey": f"{{env:{FAKE_KEY_VARIABLE}}}"},
        "models": {name: {"name": name, "cost": PRICE} for name in models},
    }
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"fake/{model}",
        "provider": {"fake": provider},
        "autoupdate": False,
        "share": "disabled",
    }
    return json.dumps(config, indent=2) + "\n"


def opencode_env(home: Path, config: str, base: Mapping[str, str]) -> dict[str, str]:
    """`base` plus what opencode needs: a private HOME with `config` as its opencode.json (opencode_config) and
    XDG folders, the fake key, and no downloads. Real credentials and opencode settings in `base` are left out."""
    folders = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    (folders["XDG_CONFIG_HOME"] / "opencode").mkdir(exist_ok=True)
    (folders["XDG_CONFIG_HOME"] / "opencode" / "opencode.json").write_text(config)
    env = {key: value for key, value in base.items() if not key.startswith(_DROPPED)}
    env.update({key: str(folder) for key, folder in folders.items()})
    env.update(
        HOME=str(home),
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
    )
    env[FAKE_KEY_VARIABLE] = FAKE_API_KEY
    return env
