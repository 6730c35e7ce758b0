"""The `claude:` settings: the executable and the flags ralph adds to `claude -p`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClaudeSettings:
    """Claude Code's own settings, resolved (config.py builds it from the `claude:` section)."""

    command: str | None  # the executable; None: `claude` on PATH
    skip_permissions: bool  # --dangerously-skip-permissions, only ever because the user asked for it
    allowed_tools: tuple[str, ...]
    max_turns: int | None
    append_system_prompt: str | None
    resume: bool  # each iteration resumes the session of the one before
