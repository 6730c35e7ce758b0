"""Where users keep their task files: the places a bare `ralph run|validate|status|...` looks when `.ralph/` holds
no feature of ralph's own (a user coming from another Ralph tool has theirs where that tool put it).

The places are data, in the order they are listed to the user: one table to extend. Like plugins/detect.py this
looks at file names only (`ralph status` resolves features through it): a handful of stats, nothing parsed.
"""

from __future__ import annotations

import os

from ralphloop.plugins.detect import RALPH_DIR
from ralphloop.plugins.formats import detect

# (a folder relative to the project root, `*` standing for any one folder name; the formats that count there).
# The root takes no TODO.md and nothing takes a README-style list: a TODO.md at a project's root may well be
# somebody else's list, so it is worked only when named (`ralph run .`).
PLACES: tuple[tuple[str, frozenset[str]], ...] = (
    (RALPH_DIR, frozenset({"prd", "todo", "goal"})),  # `.ralph/prd.json` (its fix plan is the root's, below)
    ("scripts/ralph", frozenset({"prd", "todo", "fix-plan", "goal"})),  # snarktank/ralph's own layout
    ("scripts/ralph-*", frozenset({"prd"})),
    ("ralph", frozenset({"prd", "todo", "goal"})),
    (".", frozenset({"prd", "fix-plan", "stories", "goal"})),  # prd.json, (@)fix_plan.md (or in .ralph/), specs/
    ("tasks", frozenset({"prd"})),
    ("plans", frozenset({"todo"})),
    ("plans/*", frozenset({"todo"})),  # seed 004's plan folders
    (".claude/sprints/*", frozenset({"goal"})),  # m42-sprint's sprints
)


def usual_places(project_root: str) -> list[str]:
    """Every folder at the usual places that holds a task file of a format that counts there (absolute paths),
    in PLACES order."""
    found: list[str] = []
    for pattern, kinds in PLACES:
        for folder in _expand(project_root, pattern):
            if folder not in found and detect(folder) in kinds:
                found.append(folder)
    return found


def _expand(root: str, pattern: str) -> list[str]:
    """The folders `pattern` names under `root`, sorted; a `*` part matches any folder name (not a hidden one
    unless the pattern's part starts with a dot), never a link to elsewhere."""
    folders = [os.path.abspath(root)]
    for part in pattern.split("/"):
        if part == ".":
            continue
        following: list[str] = []
        for folder in folders:
            if "*" not in part:
                following.append(os.path.join(folder, part))
                continue
            prefix = part.split("*", 1)[0]
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            following += [
                os.path.join(folder, name)
                for name in names
                if name.startswith(prefix) and (prefix.startswith(".") or not name.startswith("."))
            ]
        folders = following
    real_root = os.path.realpath(root)
    return [  # no folder on the way a link: `scripts -> /elsewhere` is not this project's
        folder
        for folder in folders
        if os.path.isdir(folder)
        and os.path.realpath(folder) == os.path.normpath(os.path.join(real_root, os.path.relpath(folder, root)))
    ]


def places_words() -> str:
    """The usual places, as an error lists them."""
    return ", ".join("the project's root" if pattern == "." else f"{pattern}/" for pattern, _ in PLACES)
