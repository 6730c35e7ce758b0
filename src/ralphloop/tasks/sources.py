"""The task source a workspace holds, opened: detect.py names the kind, formats.py says where its source lives."""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import TaskSource, TaskView
from ralphloop.plugins.formats import detect, find_format, missing_message
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.focus import OneTask, ResumeFrom
from ralphloop.tasks.problems import Problem, from_error
from ralphloop.words.patterns import lazy


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
    """The source of `kind` in the workspace (its module imported now), narrowed by -s/--story or --resume-from."""
    row = find_format(kind)
    folder = display_path(paths.dir, os.getcwd())
    if row is None:
        raise RalphError(f"{folder}: unknown task format {kind!r}")
    if not row.narrowable and (story or resume_from):
        raise RalphError(f"{folder}: a {kind} workspace plans its own steps: -s/--story and --resume-from do not apply")
    opener = row.load("open_source")
    source: TaskSource = opener(paths, story_order=story_order, resume_from=resume_from if row.narrows_itself else None)
    if story:
        source = OneTask(source, story)
    elif resume_from and not row.narrows_itself:
        source = ResumeFrom(source, resume_from)
    return source


def checked_source(
    paths: FeaturePaths,
    kind: str,
    *,
    story_order: tuple[str, ...] | None = None,
    story: str | None = None,
    resume_from: str | None = None,
) -> tuple[list[Problem], TaskSource | None, TaskView | None]:
    """What stops `ralph run` at its task source, the source opened and loaded as the run does it (a source that
    lists its problems itself, story specs: every problem, each at its place, with each story that waits on one
    the run leaves out, tells them all); and the source the run works, with its first view, when it loaded: the run
    uses them rather than opening and reading its task file again."""
    try:
        source = open_source(paths, kind, story_order=story_order, resume_from=resume_from)
        problems = source.problems()
        if problems:
            return problems, None, None
        narrowed = open_source(paths, kind, story_order=story_order, story=story, resume_from=resume_from)
        view = narrowed.load()
    except RalphError as exc:
        return [from_error(exc, paths.display())], None, None
    shown = display_path(narrowed.path, os.getcwd())
    examples = [
        Problem(shown, f"{task.id} {EXAMPLE_WORDS} ({task.title!r}): replace it", task.line)
        for task in view.tasks
        if not task.done and _EXAMPLE.match(task.title)
    ]
    return examples, narrowed, view


EXAMPLE_WORDS = "is still the example `ralph init` wrote"
# The examples `ralph init` writes (tasks/*.py `starter`): a run would spend an agent's time on them.
_EXAMPLE = lazy(
    r"Replace (this example (story|task|item)|this one too|or delete this one)\b"
    r"|Describe what .+ should achieve, and how to tell that it has\."  # a goal's (goal_sprint.new_sprint)
)
