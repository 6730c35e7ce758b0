"""The real Codex CLI the codex end-to-end tests drive, pinned, installed once by npm_cli.py."""

from __future__ import annotations

from typing import Final

from tests.e2e.npm_cli import PinnedCli

__all__ = ["CODEX_VERSION", "codex_executable"]

CODEX_VERSION: Final = "0.169.0"
CODEX: Final = PinnedCli(
    label="Codex",
    package="@openai/codex",
    version=CODEX_VERSION,
    binary="codex",
    folder="codex",
    version_ok=lambda printed: f"codex-cli {CODEX_VERSION}" in printed,
)


def codex_executable() -> str:
    return CODEX.executable()
