"""`.ralph/.gitignore`: ralph's runtime files kept out of commits, made by `ralph init` and checked by every
`ralph run` (which must not import `ralph init`'s templates and task formats for it)."""

from __future__ import annotations

import os

from ralphloop.paths import GITIGNORE_TEXT
from ralphloop.safe_read import CONFIG_CAP, read_file
from ralphloop.state.owner import OWN_FOLDER
from ralphloop.state.store import atomic_write_text


def ensure_gitignore(ralph_dir: str) -> bool:
    """Keep ralph's runtime files out of commits; True when the file was created or extended. ralph's own
    `.ralphloop/` (its state beside another tool's files, state/owner.py) is listed once it is there."""
    path = os.path.join(ralph_dir, ".gitignore")
    own = [f"{OWN_FOLDER}/"] if os.path.isdir(os.path.join(ralph_dir, OWN_FOLDER)) else []
    raw = read_file(path, cap=CONFIG_CAP)
    if raw is None:
        atomic_write_text(path, GITIGNORE_TEXT + "".join(f"{line}\n" for line in own))
        return True
    present = raw.decode("utf-8", "replace")
    have = set(present.splitlines())
    wanted = [*GITIGNORE_TEXT.splitlines(), *own]
    missing = [line for line in wanted if line and not line.startswith("#") and line not in have]
    if not missing:
        return False
    prefix = "" if present.endswith("\n") or not present else "\n"
    atomic_write_text(path, present + prefix + "\n".join(missing) + "\n")
    return True
