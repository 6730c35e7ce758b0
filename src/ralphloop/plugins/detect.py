"""Which task source a folder holds, by the files in it (ARCHITECTURE.md, "Workspace"); the finders of the
formats in plugins/formats.py.

Only file names are looked at, nothing is parsed: `ralph status` resolves features through this,
and it must stay cheap (plain `os`, no YAML, no JSON).
"""

from __future__ import annotations

import os

from ralphloop.files.safe_read import read_head
from ralphloop.words.patterns import lazy

RALPH_DIR = ".ralph"
FIX_PLAN_NAMES = ("fix_plan.md", "@fix_plan.md")
TASK_FILE_NAMES = ("prd.json", "TODO.md", *FIX_PLAN_NAMES, "SPRINT.yaml")  # the files a format is found by
_EPIC = lazy(r"^epic-\d+$")
_STORY = lazy(r"^story-\d+\.\d+(?:-.+)?\.md$")
# seed 001: a PROGRESS.yaml alone is a goal workspace when a top-level line says `mode: ralph` (compiled, with re's
# import, only when there is one: `ralph status` resolves features through this module)
_GOAL_MODE = rb"(?m)^mode:[ \t]*[\"']?ralph[\"']?[ \t]*(?:#.*)?$"
_GOAL_SCAN = 64 * 1024


def present(path: str) -> bool:
    """Whether a task file is there: a folder of that name is not one; a FIFO, a device or a broken link
    is, so that its reader refuses it by name rather than the folder look empty."""
    return os.path.lexists(path) and not os.path.isdir(path)


def fix_plan_file(folder: str) -> str | None:
    """seed 000's plan: fix_plan.md or @fix_plan.md, in `folder` or in its .ralph/ subfolder."""
    for where in (folder, os.path.join(folder, RALPH_DIR)):
        for name in FIX_PLAN_NAMES:
            path = os.path.join(where, name)
            if present(path):
                return path
    return None


def has_story_specs(folder: str) -> bool:
    """Whether `folder/specs/epic-N/story-N.M-*.md` holds at least one spec (seed 002)."""
    specs = os.path.join(folder, "specs")
    try:
        epics = [name for name in os.listdir(specs) if _EPIC.match(name)]
    except OSError:
        return False
    for epic in epics:
        try:
            if any(_STORY.match(name) for name in os.listdir(os.path.join(specs, epic))):
                return True
        except OSError:
            continue
    return False


def is_goal_workspace(folder: str) -> bool:
    """Whether `folder` holds a goal workspace (seed 001): a SPRINT.yaml (one whose workflow is not ralph's
    is then reported as such, which says more than "no task file"), or a PROGRESS.yaml in ralph mode."""
    if present(os.path.join(folder, "SPRINT.yaml")):
        return True
    head = read_head(os.path.join(folder, "PROGRESS.yaml"), _GOAL_SCAN)
    if head is None:
        return False
    import re

    return re.search(_GOAL_MODE, head) is not None


def task_files(folder: str) -> list[str]:
    """Every task file in `folder` (and a fix plan in its .ralph/), by name, in the order the formats win: more
    than one means some list is not the one ralph works (`ralph run` says so)."""
    names = [name for name in TASK_FILE_NAMES if name not in FIX_PLAN_NAMES and present(os.path.join(folder, name))]
    plans = [
        os.path.relpath(os.path.join(where, name), folder)
        for where in (folder, os.path.join(folder, RALPH_DIR))
        for name in FIX_PLAN_NAMES
        if present(os.path.join(where, name))
    ]
    return [*names[:2], *plans, *(["specs/"] if has_story_specs(folder) else []), *names[2:]]


def detect_root(project_root: str) -> str | None:
    """The kind of workspace the project root itself is, for `ralph run` with no folder named.

    Only the layouts made to live at a project's root count (seed 000's fix plan, seed 002's
    specs/): a TODO.md or prd.json at the root may well be somebody else's and must be named."""
    if fix_plan_file(project_root):
        return "fix-plan"
    if has_story_specs(project_root):
        return "stories"
    return None


def missing_message(display: str) -> str:
    """The error for a folder that holds no task source at all."""
    return (
        f"{display}: TODO.md not found in plan directory (nor prd.json, fix_plan.md, @fix_plan.md, "
        f"specs/epic-N/story-N.M-*.md or SPRINT.yaml)"
    )
