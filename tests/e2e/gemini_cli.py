"""The real Gemini CLI the gemini end-to-end tests drive, pinned, installed once by npm_cli.py."""

from __future__ import annotations

from typing import Final

from tests.e2e.npm_cli import PinnedCli

__all__ = ["GEMINI_VERSION", "gemini_executable"]

GEMINI_VERSION: Final = "0.61.0"
GEMINI: Final = PinnedCli(
    label="Gemini",
    package="@google/gemini-cli",
    version=GEMINI_VERSION,
    binary="gemini",
    folder="gemini",
    version_ok=lambda printed: printed.strip().splitlines()[-1:] == [GEMINI_VERSION] if printed.strip() else False,
)


def gemini_executable() -> str:
    return GEMINI.executable()
