"""`ralph init FEATURE [--format F]`: a new feature folder with its task file (prd.json by default;
TODO.md, fix_plan.md + PROMPT.md, or a story spec), progress.txt and the prompt; plus Claude Code's
/ralph-plan and /ralph-prd commands in the project's .claude/commands/."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile

from ralphloop.cli.claude_commands import edited_claude_commands, write_claude_commands
from ralphloop.config.settings import CONFIG_NAME
from ralphloop.config.template import DEFAULT_PROJECT_CONFIG
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import iso
from ralphloop.files.store import atomic_write_text
from ralphloop.plugins.formats import all_formats, find_format, format_of
from ralphloop.project.paths import ARCHIVE_DIR, RALPH_DIR, display_path, find_project_root
from ralphloop.records.progress import header
from ralphloop.words.choices import not_a_choice
from ralphloop.workspace.gitignore import ensure_gitignore

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    name: str = args.feature
    _known(args.format)
    if not _NAME.match(name) or name == ARCHIVE_DIR:
        raise RalphError(
            f"FEATURE {name!r}: use letters, digits, '.', '_' and '-' (up to 100, not starting with a symbol,"
            f" not '{ARCHIVE_DIR}')"
        )
    root = find_project_root()
    ralph_dir = os.path.join(root, RALPH_DIR)
    target = os.path.join(ralph_dir, name)
    shown = display_path(target, os.getcwd())
    if os.path.exists(target):
        raise RalphError(f"{shown} already exists: choose another name, or run 'ralph archive -f {name}' first")
    os.makedirs(ralph_dir, exist_ok=True)
    created = iso(SystemClock().now())
    # Build the folder beside its final place and rename it in: never half a feature.
    staging = tempfile.mkdtemp(prefix=f".init-{name}-", dir=ralph_dir)
    try:
        files = _starter_files(args.format, name, created)
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(staging, rel)), exist_ok=True)
            _write(os.path.join(staging, rel), text)
        os.chmod(staging, 0o755)
        if os.path.exists(target):
            raise RalphError(f"{shown} already exists")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    listed = sorted({rel.split("/")[0] + ("/" if "/" in rel else "") for rel in files})
    made = [f"{shown}/ ({', '.join(listed)})"]
    config = os.path.join(ralph_dir, CONFIG_NAME)
    if not os.path.exists(config):
        atomic_write_text(config, DEFAULT_PROJECT_CONFIG)
        made.append(display_path(config, os.getcwd()))
    if ensure_gitignore(ralph_dir):
        made.append(display_path(os.path.join(ralph_dir, ".gitignore"), os.getcwd()))
    made += [display_path(path, os.getcwd()) for path in write_claude_commands(root)]
    print("Created " + ", ".join(made))
    for path in edited_claude_commands(root):  # the user's own version wins; say so, so an update is not a mystery
        print(f"Kept your edited {display_path(path, os.getcwd())} (ralph's version was not written)")
    print(f"Next: {format_of(args.format).next_step.format(shown=shown)}, then: ralph run -f {name}")
    return 0


def _known(kind: str) -> None:
    """A format ralph has or a plug-in adds; else a one-line error naming the near miss and every name."""
    if find_format(kind) is not None:
        return
    raise RalphError(not_a_choice("--format", kind, "no such task format", list(all_formats())))


def _starter_files(kind: str, name: str, created: str) -> dict[str, str]:
    """The files a new feature of `kind` starts with (paths relative to its folder)."""
    return {"progress.txt": header(name, created), **format_of(kind).load("starter")(name, created)}


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
