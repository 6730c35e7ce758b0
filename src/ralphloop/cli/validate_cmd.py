"""`ralph validate [-f F]`: check a workspace's task files (prd.json, spec.md, TODO.md, fix_plan.md,
story specs) and the config, printing every problem with its place; exit 1 when there is one."""

from __future__ import annotations

import argparse
import os

from ralphloop.config.settings import load_settings
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.plugins.detect import fix_plan_file, has_story_specs, is_goal_workspace, present
from ralphloop.plugins.formats import detect
from ralphloop.project.paths import FeaturePaths, display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.start.preflight import others_notice, run_problems
from ralphloop.tasks.fix_plan import fix_plan_problems
from ralphloop.tasks.goal import goal_problems
from ralphloop.tasks.prd_json import prd_problems
from ralphloop.tasks.problems import Problem, from_error
from ralphloop.tasks.spec_md.parse import spec_problems
from ralphloop.tasks.stories.scan import story_problems
from ralphloop.tasks.todo_md import todo_problems
from ralphloop.words.textsafe import strip_terminal_controls


def command(args: argparse.Namespace, argv: list[str]) -> int:
    root = find_project_root()
    paths = resolve_feature(root, args.feature, command=("validate",))
    if args.fix:
        from ralphloop.cli.validate_fix import fix_checklists  # checkboxes for a plan in bullets, asked first

        fix_checklists(paths)
    warnings: list[str] = []
    problems: list[Problem] = []
    settings = None
    try:
        settings = load_settings(root, {}, warn=warnings.append)
    except RalphError as exc:
        problems.append(Problem("config", str(exc)))
    kind = detect(paths.dir) if settings is not None else None
    # The run's own check lists every problem of a story or goal workspace's files: not checked twice.
    shared = _FILE_OF[kind] if kind in _LISTED_BY_THE_RUN_CHECK else None
    checked, found = check_workspace(paths, settings.loop.story_order if settings else None, leave_out=shared)
    problems += [problem for _, file_problems in found for problem in file_problems]
    if settings is not None and kind is not None:
        # What `ralph run` would refuse besides the files' own problems. Its source check is left out when
        # the file check found problems in the file it reads: its first one would be told twice.
        problems += run_problems(paths, settings, kind, source=not dict(found).get(_FILE_OF[kind]))
    notice = others_notice(paths)  # another tool's files by ralph's names in .ralph/: left alone, not a problem
    warnings += [notice] if notice else []
    # a problem quotes the files (an id, a title), which may hold escape sequences: none reaches the screen
    for warning in warnings:
        print(strip_terminal_controls(f"warning: {warning}"))
    for problem in problems:
        print(strip_terminal_controls(str(problem)))
    shown = paths.display()
    if problems:
        count = len(problems)
        print(f"{count} problem{'s' if count != 1 else ''} in {shown} ({', '.join(checked) or 'no task file'})")
        return 1
    print(f"ok: {shown}: {', '.join(checked)} valid")
    return 0


# The entry of check_workspace that holds the file each kind of task source reads.
_FILE_OF = {"prd": "prd.json", "todo": "TODO.md", "fix-plan": "fix plan", "stories": "specs/", "goal": "SPRINT.yaml"}
# Kinds whose source check (start/preflight.run_problems) lists every problem of their files, as the file check does.
_LISTED_BY_THE_RUN_CHECK = frozenset({"stories", "goal"})


def check_workspace(
    paths: FeaturePaths, story_order: tuple[str, ...] | None, leave_out: str | None = None
) -> tuple[list[str], list[tuple[str, list[Problem]]]]:
    """Every task file the workspace holds, checked (but the `leave_out` entry of _FILE_OF, only named):
    (the files checked, each file's problems by the entry of _FILE_OF naming it)."""
    cwd = os.getcwd()
    checked: list[str] = []
    found: list[tuple[str, list[Problem]]] = []
    if present(paths.prd):
        checked.append("prd.json")
        shown = display_path(paths.prd, cwd)
        raw = _read(paths.prd, shown)
        found.append(("prd.json", raw if isinstance(raw, list) else prd_problems(raw, shown)))
    spec = os.path.join(paths.dir, "spec.md")
    if present(spec):
        checked.append("spec.md")
        shown = display_path(spec, cwd)
        raw = _read(spec, shown)
        text = raw if isinstance(raw, list) else spec_problems(raw.decode("utf-8", "replace"), shown)
        found.append(("spec.md", text))
    if present(os.path.join(paths.dir, "TODO.md")):
        checked.append("TODO.md")
        found.append(("TODO.md", todo_problems(paths.dir, display_path(paths.dir, cwd))))
    plan = fix_plan_file(paths.dir)
    if plan:
        checked.append(os.path.basename(plan))
        found.append(("fix plan", fix_plan_problems(plan, display_path(plan, cwd))))
    if has_story_specs(paths.dir):
        checked.append("specs/")
        if leave_out != "specs/":
            found.append(("specs/", story_problems(paths.dir, display_path(paths.dir, cwd), story_order)))
    if is_goal_workspace(paths.dir):
        checked.append("SPRINT.yaml")
        if leave_out != "SPRINT.yaml":
            found.append(("SPRINT.yaml", goal_problems(paths.dir, display_path(paths.dir, cwd), paths.project_root)))
    if not checked:
        message = "no task file (prd.json, TODO.md, fix_plan.md, specs/epic-N/ or SPRINT.yaml)"
        found.append(("", [Problem(paths.display(), message)]))
    return checked, found


def _read(path: str, shown: str) -> bytes | list[Problem]:
    """The file's bytes, or the one problem that keeps it from being read (a FIFO, a folder, too big)."""
    try:
        return read_file(path, shown, cap=TASK_CAP) or b""
    except RalphError as exc:
        return [from_error(exc, shown)]
