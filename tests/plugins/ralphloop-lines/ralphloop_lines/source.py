"""TASKS.txt: `[ ] title` is an open task, `[x] title` a done one; blank lines and `#` comments are not tasks.
Anything else is a problem named with its line."""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.core.file_task import FileTask
from ralphloop.core.protocols import Task, TaskView
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.problems import Problem

NAME = "TASKS.txt"


def read_lines(path: str, shown: str) -> tuple[list[Task], list[Problem]]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(1024 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(shown, f"cannot be read: {getattr(exc, 'strerror', None) or 'not UTF-8'}")]
    return parse(text, shown)


def parse(text: str, shown: str) -> tuple[list[Task], list[Problem]]:
    tasks: list[Task] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        mark, _, title = line.partition("] ")
        if mark not in ("[ ", "[x") or not title.strip():
            problems.append(Problem(shown, f"not a task line (write `[ ] task` or `[x] task`): {line[:60]!r}", number))
            continue
        tasks.append(Task(id=f"L{number}", title=title.strip(), done=mark == "[x", line=number))
    if not tasks and not problems:
        problems.append(Problem(shown, "no task: write one `[ ] task` a line"))
    return tasks, problems


def check_files(paths: FeaturePaths, story_order: object) -> list[tuple[str, list[Problem]]]:
    """`ralph validate`'s check of TASKS.txt."""
    path = os.path.join(paths.dir, NAME)
    return [(NAME, read_lines(path, display_path(path, os.getcwd()))[1])]


class LinesSource(SourceBase):
    kind = "lines"

    def __init__(self, paths: FeaturePaths) -> None:
        self.file = os.path.join(paths.dir, NAME)
        self.path = display_path(self.file, os.getcwd())

    def load(self) -> TaskView:
        tasks, problems = read_lines(self.file, self.path)
        if problems:
            raise RalphError(str(problems[0]))
        open_tasks = [task for task in tasks if not task.done]
        return TaskView(tasks=tuple(tasks), next_task=open_tasks[0] if open_tasks else None)

    def describe(self, task: Task) -> str:
        return (
            f"## Current task: {task.title}\n\nLine {task.line} of {self.path}. When it is done, change its `[ ]` "
            f"to `[x]`."
        )


def open_source(paths: FeaturePaths, *, story_order: object = None, resume_from: object = None) -> LinesSource:
    return LinesSource(paths)


def starter(name: str, created: str) -> dict[str, str]:
    return {NAME: f"# {name}\n[ ] Write the first task here\n"}


def file_tasks(raw: bytes, shown: str) -> list[FileTask]:
    """`ralph run --parallel`'s reading of TASKS.txt at any git version: a task a line, after the ones above it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RalphError(f"{shown}: not UTF-8") from None
    tasks, problems = parse(text, shown)
    if problems:
        raise RalphError(str(problems[0]))
    return [FileTask(task.id, task.title, task.done, task.line, (), task.title) for task in tasks]


def marked(raw: bytes, task_id: str) -> bytes:
    """TASKS.txt with the task of `task_id` (its line) marked `[x]`."""
    lines = raw.decode("utf-8").split("\n")
    number = int(task_id.removeprefix("L")) - 1
    lines[number] = lines[number].replace("[ ]", "[x]", 1)
    return "\n".join(lines).encode("utf-8")
