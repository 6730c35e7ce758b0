"""The `codex:` settings: the executable ralph runs as `codex exec`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CodexSettings:
    """The Codex CLI's own settings, resolved (config.py builds it from the `codex:` section)."""

    command: str | None  # the executable; None: `codex` on PATH
