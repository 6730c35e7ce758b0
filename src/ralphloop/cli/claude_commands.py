"""The Claude Code slash commands ralph ships (/ralph-plan, /ralph-prd) and their installation into a
project's `.claude/commands/`, where Claude Code looks for project commands."""

from __future__ import annotations

import os
from importlib import resources

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import CONFIG_CAP, read_file
from ralphloop.files.store import atomic_write_text

COMMAND_FILES = ("ralph-plan.md", "ralph-prd.md")
COMMANDS_DIR = os.path.join(".claude", "commands")


def claude_command_files() -> dict[str, str]:
    """File name → text of every command template, in a fixed order."""
    folder = resources.files("ralphloop.templates.claude")
    return {name: folder.joinpath(name).read_text(encoding="utf-8") for name in COMMAND_FILES}


def write_claude_commands(project_root: str) -> list[str]:
    """Write the commands that are missing from `<project_root>/.claude/commands/`; the paths written.

    A file that is already there is left alone even when it differs from ours: the user may have
    tailored it, and silently replacing their edit is worse than shipping an older command.
    """
    folder = os.path.join(project_root, COMMANDS_DIR)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise RalphError(f"cannot create {folder}: {exc.strerror}") from None
    written: list[str] = []
    for name, text in claude_command_files().items():
        path = os.path.join(folder, name)
        if _present(path):
            continue
        atomic_write_text(path, text)
        written.append(path)
    return written


def edited_claude_commands(project_root: str) -> list[str]:
    """The installed command files whose text is not ours (kept by write_claude_commands), to mention them."""
    edited: list[str] = []
    for name, text in claude_command_files().items():
        path = os.path.join(project_root, COMMANDS_DIR, name)
        current = _read_bytes(path)
        if current is not None and current != text.encode("utf-8"):
            edited.append(path)
    return edited


def _present(path: str) -> bool:
    # lexists: a dangling symlink is the user's too; writing through or over it would be a surprise.
    if os.path.isdir(path):
        raise RalphError(f"{path} is a folder, not a command file: move it away and try again")
    return os.path.lexists(path)


def _read_bytes(path: str) -> bytes | None:
    return read_file(path, cap=CONFIG_CAP)
