"""Each built-in format's check of its files, for `ralph validate`: a format row names its own (plugins/formats.py,
`check`), so validate tests no format's name. A check returns its files' entries: (the name validate shows, their
problems), the format's own file first; [] when the folder holds none of them."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.plugins.detect import fix_plan_file, present
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.problems import Problem, from_error

Entries = list[tuple[str, list[Problem]]]


def prd(paths: FeaturePaths, story_order: Sequence[str] | None) -> Entries:
    """prd.json, and spec.md beside it (what `ralph prd` turns into prd.json)."""
    from ralphloop.tasks.prd_json import prd_problems

    shown = display_path(paths.prd, os.getcwd())
    raw = read_task_file(paths.prd, shown)
    return [("prd.json", raw if isinstance(raw, list) else prd_problems(raw, shown)), *spec_md(paths)]


def spec_md(paths: FeaturePaths) -> Entries:
    """spec.md, when the folder holds one."""
    from ralphloop.tasks.spec_md.parse import spec_problems

    spec = os.path.join(paths.dir, "spec.md")
    if not present(spec):
        return []
    shown = display_path(spec, os.getcwd())
    raw = read_task_file(spec, shown)
    return [("spec.md", raw if isinstance(raw, list) else spec_problems(raw.decode("utf-8", "replace"), shown))]


def todo(paths: FeaturePaths, story_order: Sequence[str] | None) -> Entries:
    from ralphloop.tasks.todo_md import todo_problems

    return [("TODO.md", todo_problems(paths.dir, display_path(paths.dir, os.getcwd())))]


def fix_plan(paths: FeaturePaths, story_order: Sequence[str] | None) -> Entries:
    from ralphloop.tasks.fix_plan import fix_plan_problems

    plan = fix_plan_file(paths.dir)
    if plan is None:
        return []
    return [(os.path.basename(plan), fix_plan_problems(plan, display_path(plan, os.getcwd())))]


def stories(paths: FeaturePaths, story_order: Sequence[str] | None) -> Entries:
    from ralphloop.tasks.stories.scan import story_problems

    return [("specs/", story_problems(paths.dir, display_path(paths.dir, os.getcwd()), story_order))]


def goal(paths: FeaturePaths, story_order: Sequence[str] | None) -> Entries:
    from ralphloop.tasks.goal import goal_problems

    return [("SPRINT.yaml", goal_problems(paths.dir, display_path(paths.dir, os.getcwd()), paths.project_root))]


def read_task_file(path: str, shown: str) -> bytes | list[Problem]:
    """The file's bytes, or the one problem that keeps it from being read (a FIFO, a folder, too big)."""
    try:
        return read_file(path, shown, cap=TASK_CAP) or b""
    except RalphError as exc:
        return [from_error(exc, shown)]
