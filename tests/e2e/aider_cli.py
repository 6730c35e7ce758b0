"""The real aider the aider end-to-end tests drive, pinned, installed once by pypi_cli.py, and the environment
that points it at a loopback fake of the OpenAI Chat Completions API with nothing leaving the machine."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat
from tests.e2e.pypi_cli import PinnedPypiCli

__all__ = ["AIDER", "AIDER_VERSION", "aider_env", "aider_executable"]

AIDER_VERSION: Final = "0.86.2"
AIDER: Final = PinnedPypiCli(
    label="aider",
    package="aider-chat",
    version=AIDER_VERSION,
    binary="aider",
    entry_point="aider.main:main",
    folder="aider",
    version_ok=lambda printed: f"aider {AIDER_VERSION}" in printed.splitlines(),
)
# Every variable a provider key or base URL may come from: the tests' aider sees only the fake's.
_PROVIDER_PREFIXES: Final = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "DEEPSEEK_", "OPENROUTER_", "AIDER_", "LITELLM_")
_PRICES: Final = "model_prices_and_context_window.json"


def aider_executable() -> str:
    return AIDER.executable()


def aider_env(base: dict[str, str], home: Path, fake: FakeOpenAIChat) -> dict[str, str]:
    """`base` with a private HOME, the fake as the OpenAI API (its key in OPENAI_API_KEY, its URL in
    OPENAI_API_BASE, which litellm reads) and no other provider's key.

    Aider looks a model's context window and prices up in litellm's table, which it downloads once a day into
    `~/.aider/caches/`, and litellm downloads it again at import: the HOME gets the table aider's litellm ships,
    and LITELLM_LOCAL_MODEL_COST_MAP makes litellm read its own copy, so no request leaves the machine."""
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True, exist_ok=True)
    shipped = AIDER.site_packages() / "litellm" / "model_prices_and_context_window_backup.json"
    shutil.copyfile(shipped, caches / _PRICES)
    env = {key: value for key, value in base.items() if not key.startswith(_PROVIDER_PREFIXES)}
    return {
        **env,
        "HOME": str(home),
        "OPENAI_API_KEY": FAKE_API_KEY,
        "OPENAI_API_BASE": fake.url,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
