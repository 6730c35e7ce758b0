"""The task source a workspace holds, opened: detect.py names the kind, this builds the source."""

from __future__ import annotations

import os

from ralphloop.errors import RalphError
from ralphloop.paths import FeaturePaths, display_path
from ralphloop.protocols import TaskSource
from ralphloop.tasks.detect import detect, fix_plan_file, missing_message
from ralphloop.tasks.fix_plan import FixPlanSource
from ralphloop.tasks.focus import OneTask, ResumeFrom
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.prd_json import PrdSource
from ralphloop.tasks.problems import Problem, from_error
from ralphloop.tasks.stories.source import StorySource
from ralphloop.tasks.todo_md import TodoSource


def source_kind(paths: FeaturePaths) -> str:
    kind = detect(paths.dir)
    if kind is None:
        raise RalphError(missing_message(paths.display()))
    return kind


def open_source(
    paths: FeaturePaths,
    kind: str,
    *,
    story_order: tuple[str, ...] | None = None,
    story: str | None = None,
    resume_from: str | None = None,
) -> TaskSource:
    """The source of `kind` in the workspace, narrowed by -s/--story or --resume-from."""
    cwd = os.getcwd()
    folder = display_path(paths.dir, cwd)
    source: TaskSource
    if kind == "prd":
        source = PrdSource(paths.prd, display_path(paths.prd, cwd))
    elif kind == "todo":
        source = TodoSource(paths.dir, folder)
    elif kind == "fix-plan":
        plan = fix_plan_file(paths.dir)
        if plan is None:
            raise RalphError(missing_message(paths.display()))
        source = FixPlanSource(plan, display_path(plan, cwd))
    elif kind == "stories":
        # the story source handles --resume-from itself: it knows which specs story_order leaves out too
        source = _story_source(paths, folder, story_order, resume_from)
        resume_from = None
    elif kind == "goal":
        if story or resume_from:
            raise RalphError(
                f"{folder}: a goal workspace plans its own steps: -s/--story and --resume-from do not apply"
            )
        source = GoalSource(paths.dir, folder, paths.project_root)
    else:
        raise RalphError(f"{folder}: unknown task format {kind!r}")
    if story:
        source = OneTask(source, story)
    elif resume_from:
        source = ResumeFrom(source, resume_from)
    return source


def _story_source(
    paths: FeaturePaths, folder: str, story_order: tuple[str, ...] | None, resume_from: str | None
) -> StorySource:
    return StorySource(paths.dir, folder, paths.state, paths.progress, story_order=story_order, resume_from=resume_from)


def source_problems(
    paths: FeaturePaths,
    kind: str,
    *,
    story_order: tuple[str, ...] | None = None,
    story: str | None = None,
    resume_from: str | None = None,
) -> list[Problem]:
    """What stops `ralph run` at its task source: the source opened and loaded as the run does it; for
    story specs every problem, each at its place, with each story that waits on one the run leaves out
    (the run would stop there later)."""
    if kind == "stories":
        problems = _story_source(paths, display_path(paths.dir, os.getcwd()), story_order, resume_from).problems()
        if problems or story is None:
            return problems
    try:
        open_source(paths, kind, story_order=story_order, story=story, resume_from=resume_from).load()
    except RalphError as exc:
        return [from_error(exc, paths.display())]
    return []
