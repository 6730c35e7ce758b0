"""`ralph validate [-f F]`: check a workspace's task files (prd.json, spec.md, TODO.md, fix_plan.md,
story specs) and the config, printing every problem with its place; exit 1 when there is one."""

from __future__ import annotations

import argparse

from ralphloop.config.settings import load_settings
from ralphloop.core.errors import RalphError
from ralphloop.plugins.formats import Format, all_formats, detect, format_of
from ralphloop.project.paths import FeaturePaths, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.start.preflight import assemble, others_notice
from ralphloop.tasks.file_checks import spec_md
from ralphloop.tasks.problems import Problem
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
    # The run's own check lists every problem of some formats' files (story specs, a goal): not checked twice.
    own = format_of(kind) if kind is not None else None
    leave_out = own if own is not None and own.run_lists_problems else None
    checked, found = check_workspace(paths, settings.loop.story_order if settings else None, leave_out=leave_out)
    problems += [problem for _, _, file_problems in found for problem in file_problems]
    if settings is not None and kind is not None:
        # What `ralph run` would refuse besides the files' own problems. Its source check is left out when
        # the file check found problems in the file it reads: its first one would be told twice.
        its_file = next((file_problems for row, _, file_problems in found if row is own), [])
        problems += assemble(paths, settings, kind, source=not its_file).problems
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


def check_workspace(
    paths: FeaturePaths, story_order: tuple[str, ...] | None, leave_out: Format | None = None
) -> tuple[list[str], list[tuple[Format | None, str, list[Problem]]]]:
    """Every task file the workspace holds, each checked by its format (the `leave_out` format's only named):
    (the files checked, each with its format, its name and its problems; the format's own file first)."""
    checked: list[str] = []
    found: list[tuple[Format | None, str, list[Problem]]] = []
    for row in all_formats().values():
        if not row.check or not row.found(paths.dir):
            continue
        entries = row.part(row.check)(paths, story_order)
        checked += [name for name, _ in entries]
        if row is not leave_out:
            found += [(row, name, file_problems) for name, file_problems in entries]
    if not checked:  # no format's file; spec.md alone (what `ralph prd` reads) is still checked
        entries = spec_md(paths)
        checked += [name for name, _ in entries]
        found += [(None, name, file_problems) for name, file_problems in entries]
    if not checked:
        message = "no task file (prd.json, TODO.md, fix_plan.md, specs/epic-N/ or SPRINT.yaml)"
        found.append((None, "", [Problem(paths.display(), message)]))
    return checked, found
