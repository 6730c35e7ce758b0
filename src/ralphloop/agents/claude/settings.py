"""The `claude:` settings: the flags ralph adds to `claude -p` (its executable is `settings.commands["claude"]`)."""

from __future__ import annotations

from msgspec import Struct


class ClaudeSettings(Struct, frozen=True):
    """Claude Code's own settings, resolved (config/settings.py builds it from the `claude:` section)."""

    skip_permissions: bool  # claude.dangerously_skip_permissions: `permissions: all` for Claude Code alone
    allowed_tools: tuple[str, ...]
    max_turns: int | None
    append_system_prompt: str | None
    resume: bool  # each iteration resumes the session of the one before
