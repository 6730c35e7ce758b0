"""`ralph validate [-f F]`: check a workspace's task files (prd.json, spec.md, TODO.md, fix_plan.md,
story specs) and the config, printing every problem with its place; exit 1 when there is one."""

from __future__ import annotations

import argparse
import os
import sys

from ralphloop.config import load_settings
from ralphloop.errors import RalphError
from ralphloop.paths import FeaturePaths, display_path, find_project_root, resolve_feature
from ralphloop.tasks.detect import fix_plan_file, has_story_specs, is_goal_workspace
from ralphloop.tasks.fix_plan import fix_plan_problems
from ralphloop.tasks.goal import goal_problems
from ralphloop.tasks.prd_json import prd_problems
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.spec_md.parse import spec_problems
from ralphloop.tasks.stories.scan import story_problems
from ralphloop.tasks.todo_md import todo_problems


def command(args: argparse.Namespace, argv: list[str]) -> int:
    root = find_project_root()
    paths = resolve_feature(root, args.feature)
    warnings: list[str] = []
    problems: list[Problem] = []
    story_order = None
    try:
        story_order = load_settings(root, {}, warn=warnings.append).story_order
    except RalphError as exc:
        problems.append(Problem("config", str(exc)))
    checked, found = check_workspace(paths, story_order)
    problems += found
    for warning in warnings:
        print(f"warning: {warning}")
    for problem in problems:
        print(problem)
    shown = paths.display()
    if problems:
        count = len(problems)
        print(f"{count} problem{'s' if count != 1 else ''} in {shown} ({', '.join(checked) or 'no task file'})")
        return 1
    print(f"ok: {shown}: {', '.join(checked)} valid")
    return 0


def check_workspace(paths: FeaturePaths, story_order: tuple[str, ...] | None) -> tuple[list[str], list[Problem]]:
    """Every task file the workspace holds, checked: (the files checked, the problems found)."""
    cwd = os.getcwd()
    checked: list[str] = []
    problems: list[Problem] = []
    if os.path.isfile(paths.prd):
        shown = display_path(paths.prd, cwd)
        checked.append("prd.json")
        problems += prd_problems(_read(paths.prd), shown)
    spec = os.path.join(paths.dir, "spec.md")
    if os.path.isfile(spec):
        checked.append("spec.md")
        problems += spec_problems(_read(spec).decode("utf-8", "replace"), display_path(spec, cwd))
    if os.path.isfile(os.path.join(paths.dir, "TODO.md")):
        checked.append("TODO.md")
        problems += todo_problems(paths.dir, display_path(paths.dir, cwd))
    plan = fix_plan_file(paths.dir)
    if plan:
        checked.append(os.path.basename(plan))
        problems += fix_plan_problems(plan, display_path(plan, cwd))
    if has_story_specs(paths.dir) or story_order:
        checked.append("specs/")
        problems += story_problems(paths.dir, display_path(paths.dir, cwd), story_order)
    if is_goal_workspace(paths.dir):
        checked.append("SPRINT.yaml")
        problems += goal_problems(paths.dir, display_path(paths.dir, cwd), paths.project_root)
    if not checked:
        problems.append(
            Problem(paths.display(), "no task file (prd.json, TODO.md, fix_plan.md, specs/epic-N/ or SPRINT.yaml)")
        )
    return checked, problems


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        print(f"ralph: error: {path}: cannot read: {exc.strerror}", file=sys.stderr)
        return b""
