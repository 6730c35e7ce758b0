"""`.ralph/.gitignore`: ralph's runtime files kept out of commits, made by `ralph init` and checked by every
`ralph run` (which must not import `ralph init`'s templates and task formats for it)."""

from __future__ import annotations

import os

from ralphloop.paths import GITIGNORE_TEXT
from ralphloop.safe_read import CONFIG_CAP, read_file
from ralphloop.state.store import atomic_write_text


def ensure_gitignore(ralph_dir: str) -> bool:
    """Keep ralph's runtime files out of commits; True when the file was created or extended."""
    path = os.path.join(ralph_dir, ".gitignore")
    raw = read_file(path, cap=CONFIG_CAP)
    if raw is None:
        atomic_write_text(path, GITIGNORE_TEXT)
        return True
    present = raw.decode("utf-8", "replace")
    have = set(present.splitlines())
    missing = [line for line in GITIGNORE_TEXT.splitlines() if line and not line.startswith("#") and line not in have]
    if not missing:
        return False
    prefix = "" if present.endswith("\n") or not present else "\n"
    atomic_write_text(path, present + prefix + "\n".join(missing) + "\n")
    return True
