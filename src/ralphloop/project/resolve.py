"""Which workspace a command means: the one named (a feature in `.ralph/`, a folder, or a task file itself), else
the only one there is — a feature in `.ralph/`, else the one task file at the usual places (project/places.py) —
and, for a command that only reads, the newest archived feature when nothing is active.

Light (os; shlex in an error's words): `ralph status` starts here. In tasks/ beside detect.py and places.py, whose
finders it chooses among.
"""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import check_file
from ralphloop.plugins import detect as _detect
from ralphloop.plugins.detect import detect_root
from ralphloop.plugins.formats import broken_note, detect, format_of, missing_message
from ralphloop.project.paths import (
    ARCHIVE_DIR,
    ARCHIVE_NAME,
    RALPH_DIR,
    FeaturePaths,
    display_path,
    feature_flag,
    feature_name,
    is_feature_name,
    list_features,
)
from ralphloop.project.places import places_words, usual_places

# The files a user may name in place of their folder (`ralph run scripts/ralph/prd.json`).
_TASK_FILES = (*_detect.TASK_FILE_NAMES, "spec.md", "PROMPT.md", "progress.txt")


def resolve_feature(
    project_root: str,
    selector: str | None,
    *,
    flag: str = "-f",
    command: tuple[str, ...] = ("run",),
    archived: bool = False,
) -> FeaturePaths:
    """The workspace `selector` names, or the only one there is (see the module's docstring).

    `command` is the ralph command asking, so that a list of candidates shows the command to type for each;
    `archived` lets a reading command fall back on (or be named) an archived feature."""
    if selector:
        return _named(project_root, selector, flag, archived)
    features = list_features(project_root)
    if len(features) == 1:
        return FeaturePaths(project_root, os.path.join(project_root, RALPH_DIR, features[0]))
    if len(features) > 1:
        where = display_path(os.path.join(project_root, RALPH_DIR), os.getcwd())
        found = [FeaturePaths(project_root, os.path.join(project_root, RALPH_DIR, name)) for name in features]
        raise RalphError(
            f"several features in {where}/ ({', '.join(features)}): choose one:", choices=_choices(found, command)
        )
    places = [FeaturePaths(project_root, folder) for folder in usual_places(project_root)]
    if len(places) == 1:
        return places[0]
    if places:
        shown = ", ".join(_task_file_shown(paths) for paths in places)
        raise RalphError(f"several task files ({shown}): choose one:", choices=_choices(places, command))
    if archived:
        newest = newest_archived(project_root)
        if newest is not None:
            return newest
    raise RalphError(_nothing_found(project_root, command))


def _named(project_root: str, selector: str, flag: str, archived: bool) -> FeaturePaths:
    named = os.path.join(project_root, RALPH_DIR, selector)
    if is_feature_name(selector) and os.path.isdir(named):
        return _checked(project_root, named)
    for path in (selector, os.path.join(project_root, selector)):  # as typed, or as ralph prints it (from the root)
        if os.path.isdir(path):
            return _checked(project_root, _workspace_folder(project_root, path))
        if os.path.lexists(path) and os.path.basename(path) in _TASK_FILES:
            return _checked(project_root, _workspace_folder(project_root, os.path.dirname(os.path.abspath(path))))
    shown = selector.rstrip(os.sep) or selector
    if os.path.lexists(selector) and not os.path.isdir(selector):
        raise RalphError(
            f"{flag} {shown}: not a task file ralph reads (name its folder, or a prd.json, TODO.md, "
            f"fix_plan.md, @fix_plan.md or SPRINT.yaml)"
        )
    if not is_feature_name(selector):  # a path (seed 004's `ralph run plans/x/`) that is not there
        if os.path.basename(shown) in _TASK_FILES or "." in os.path.basename(shown).lstrip("."):
            raise RalphError(f"{flag} {shown}: no such file")  # a file's name, not a plan folder's
        raise RalphError(f"TODO.md not found in {shown} ({flag} {shown}: no such folder)")
    if _is_root_workspace(project_root, selector):  # the name `ralph status` shows for a root workspace
        return FeaturePaths(project_root, project_root)
    gone = newest_archived(project_root, selector)
    if gone is not None and archived:
        return gone
    if gone is not None:  # a command that works on an active feature: say where it went, and the way back
        raise RalphError(
            f"{flag} {selector}: archived in {gone.display()} (ralph status -f {selector} reads it there; "
            f"ralph init {selector} starts it afresh)"
        )
    known = list_features(project_root)
    hint = f" (features: {', '.join(known)})" if known else " (create it with: ralph init NAME)"
    raise RalphError(f"{flag} {selector}: no such feature in {display_path(named, os.getcwd())}{hint}")


def _workspace_folder(project_root: str, folder: str) -> str:
    """The workspace a folder (or the folder of a task file named by itself) is: itself, but the project root for
    `.ralph/` when it holds only a fix plan (seed 000 keeps its plan and PROMPT.md there and works the root)."""
    root = os.path.abspath(project_root)
    folder = os.path.abspath(folder)
    kind = detect(folder) if folder == os.path.join(root, RALPH_DIR) else None
    if kind is not None and format_of(kind).works_the_root:
        return root
    return folder


def newest_archived(project_root: str, name: str | None = None) -> FeaturePaths | None:
    """The newest archived feature (named `name`, when given), or None."""
    base = os.path.join(project_root, RALPH_DIR, ARCHIVE_DIR)
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    chosen: list[tuple[str, int, str]] = []
    for entry in entries:
        matched = ARCHIVE_NAME.fullmatch(entry)
        path = os.path.join(base, entry)
        if matched is None or os.path.islink(path) or not os.path.isdir(path) or detect(path) is None:
            continue
        if name is not None and feature_name(path, project_root) != name:
            continue
        chosen.append((matched["stamp"], int(matched["copy"] or 1), path))
    return FeaturePaths(project_root, max(chosen)[2]) if chosen else None


def _choices(found: list[FeaturePaths], command: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(paths.command(*command) for paths in found)


def _task_file_shown(paths: FeaturePaths) -> str:
    """The task file the workspace is worked by, from the project root (`scripts/ralph/prd.json`, `specs/`)."""
    first = (_detect.task_files(paths.dir) or [""])[0]  # in the order the formats win, as detect() picks
    shown = display_path(os.path.join(paths.dir, first), paths.project_root)
    return shown + "/" if first.endswith("/") else shown


def _nothing_found(project_root: str, command: tuple[str, ...]) -> str:
    where = display_path(os.path.join(project_root, RALPH_DIR), os.getcwd())
    message = (
        f"no feature in {where}/ and no task file where other Ralph tools keep theirs ({places_words()}): "
        "create one with: ralph init NAME"
    )
    newest = newest_archived(project_root)
    if newest is not None:  # a completed run archived it: the reading commands show it there
        message += f" (the last one, {newest.name}, is archived in {newest.display()}: ralph status shows it)"
    kind = detect(project_root)
    if kind is not None:  # a TODO.md at the root: maybe somebody else's list, so worked only when named
        import shlex

        message += f"; to work the root's {_task_file_shown(FeaturePaths(project_root, project_root))}: " + (
            shlex.join(["ralph", *command]) + " " + feature_flag(os.path.abspath(project_root))
        )
    return message


def _is_root_workspace(project_root: str, name: str) -> bool:
    """Whether `name` is the project root's own folder name and the root is a workspace (seeds 000, 002)."""
    root = os.path.abspath(project_root)
    return name.rstrip(os.sep) == os.path.basename(root) and detect_root(root) is not None


def _checked(project_root: str, folder: str) -> FeaturePaths:
    paths = FeaturePaths(project_root, folder)
    if detect(paths.dir) is None:
        for name in _detect.TASK_FILE_NAMES:  # a folder (or a FIFO) by a task file's name: say so
            path = os.path.join(paths.dir, name)
            check_file(path, display_path(path, os.getcwd()))
        if paths.is_feature_folder:
            raise RalphError(
                f"{paths.display()}: no prd.json in this folder (create a feature with: ralph init NAME)"
                + broken_note()
            )
        raise RalphError(missing_message(paths.display()))
    return paths
