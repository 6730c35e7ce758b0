"""Fixtures of the backend tests that build a failover chain over the real backends."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private RALPH_HOME (the book of limits and windows lives there) and Claude config folder, and no agent key
    of this machine's: each backend's account is its login folder's."""
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    for variable in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path / "home"
