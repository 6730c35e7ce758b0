"""`ralph init FEATURE`: a new feature folder with prd.json, progress.txt, prompt.md and specs/."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile

from ralphloop.config import CONFIG_NAME, DEFAULT_PROJECT_CONFIG
from ralphloop.errors import RalphError
from ralphloop.paths import ARCHIVE_DIR, GITIGNORE_TEXT, RALPH_DIR, display_path, find_project_root
from ralphloop.prompt import default_template
from ralphloop.protocols import SystemClock, iso
from ralphloop.records.progress import header
from ralphloop.state.store import atomic_write_text
from ralphloop.tasks.prd_json import new_prd

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    name: str = args.feature
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
        _write(os.path.join(staging, "prd.json"), json.dumps(new_prd(name, created), indent=2) + "\n")
        _write(os.path.join(staging, "progress.txt"), header(name, created))
        _write(os.path.join(staging, "prompt.md"), default_template())
        os.makedirs(os.path.join(staging, "specs"))
        _write(os.path.join(staging, "specs", ".gitkeep"), "")
        os.chmod(staging, 0o755)
        if os.path.exists(target):
            raise RalphError(f"{shown} already exists")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    made = [f"{shown}/ (prd.json, progress.txt, prompt.md, specs/)"]
    config = os.path.join(ralph_dir, CONFIG_NAME)
    if not os.path.exists(config):
        atomic_write_text(config, DEFAULT_PROJECT_CONFIG)
        made.append(display_path(config, os.getcwd()))
    if ensure_gitignore(ralph_dir):
        made.append(display_path(os.path.join(ralph_dir, ".gitignore"), os.getcwd()))
    print("Created " + ", ".join(made))
    print(f"Next: write the stories in {shown}/prd.json, then: ralph run -f {name}")
    return 0


def ensure_gitignore(ralph_dir: str) -> bool:
    """Keep ralph's runtime files out of commits; True when the file was created or extended."""
    path = os.path.join(ralph_dir, ".gitignore")
    try:
        with open(path, encoding="utf-8") as handle:
            present = handle.read()
    except FileNotFoundError:
        atomic_write_text(path, GITIGNORE_TEXT)
        return True
    have = set(present.splitlines())
    missing = [line for line in GITIGNORE_TEXT.splitlines() if line and not line.startswith("#") and line not in have]
    if not missing:
        return False
    prefix = "" if present.endswith("\n") or not present else "\n"
    atomic_write_text(path, present + prefix + "\n".join(missing) + "\n")
    return True


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
