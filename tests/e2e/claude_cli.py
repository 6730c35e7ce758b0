"""The real Claude Code CLI the end-to-end tests drive, pinned, installed once by npm_cli.py."""

from __future__ import annotations

from typing import Final

from tests.e2e.npm_cli import PinnedCli

__all__ = ["CLAUDE_CODE_VERSION", "claude_executable"]

CLAUDE_CODE_VERSION: Final = "2.1.329"
CLAUDE_CODE: Final = PinnedCli(
    label="Claude Code",
    package="@anthropic-ai/claude-code",
    version=CLAUDE_CODE_VERSION,
    binary="claude",
    folder="claude-code",
    version_ok=lambda printed: printed.startswith(CLAUDE_CODE_VERSION + " "),
)


def claude_executable() -> str:
    return CLAUDE_CODE.executable()
