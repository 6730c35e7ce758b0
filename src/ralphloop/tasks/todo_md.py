"""TODO.md plan directories (seed 004): `- [ ] task` lines worked top to bottom; the agent ticks the boxes.

Ids are positions among the file's checkboxes (T1, T2, ...), because a box has no name of its own.
The agent ticks boxes and appends new tasks at the end, which keeps ids stable; a task inserted above
others shifts their ids, which only matters to the retry count ralph keeps per id.

Two unchecked tasks with the same text are not reported: the ids do not depend on the text, and a list
may well say "Run the whole test suite" in two sections.

The helpers below the source are shared with fix_plan.py, which is a TODO.md with sections that do not count.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Sequence

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskView
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.bullets import near_miss, prose_miss
from ralphloop.tasks.checklist import Checklist, Item, scan_checklist
from ralphloop.tasks.order import pick_next
from ralphloop.tasks.problems import Problem, from_error, raise_first, validate_in

TODO_NAME = "TODO.md"
LATER_SHOWN = 5  # open tasks listed after the current one: enough to see where it leads, not a second list


def todo_problems(folder: str, display: str) -> list[Problem]:
    """Everything wrong with `folder`/TODO.md, for `ralph validate`; [] when it loads."""
    return _check(folder, _folder_shown(display))[1]


def _check(folder: str, display: str) -> tuple[tuple[Item, ...], list[Problem]]:
    shown = posixpath.join(display, TODO_NAME)
    if not os.path.isdir(folder):
        return (), [Problem(display, "plan directory not found")]
    text = read_markdown(
        os.path.join(folder, TODO_NAME), shown, Problem(display, "TODO.md not found in plan directory")
    )
    if isinstance(text, Problem):
        return (), [text]
    checklist = scan_checklist(text)
    problems = block_problems(checklist, shown)
    if not checklist.items:
        missed = near_miss(text, checklist, every_section, f"{validate_in(display or '.')} --fix")
        line, message = missed or prose_miss(text, checklist)
        problems.append(Problem(shown, message, line))
    return checklist.items, problems


def every_section(headings: tuple[str, ...]) -> bool:
    """A TODO.md has no optional sections: every box is a task (bullets.Required)."""
    return True


def _folder_shown(display: str) -> str:
    # seed 004 accepts `plans/x/` and shows `plans/x`
    return display.rstrip("/") or display


class TodoSource(SourceBase):
    """A plan directory's TODO.md."""

    kind = "todo"
    marks_done = False  # the agent ticks the box itself

    def __init__(self, folder: str, display: str) -> None:
        self.folder = folder
        self.display = _folder_shown(display)
        self.path = posixpath.join(self.display, TODO_NAME)
        self._tasks: tuple[Task, ...] = ()  # as last loaded: describe() lists the open tasks after the current one
        self._in_table: frozenset[str] = frozenset()  # the ids of tasks that are table rows

    def load(self) -> TaskView:
        items, problems = _check(self.folder, self.display)
        raise_first(problems, validate_in(self.display or "."))
        self._tasks = checklist_tasks(items, "T")
        self._in_table = table_rows(items, "T")
        return TaskView(tasks=self._tasks, next_task=pick_next(self._tasks))

    def describe(self, task: Task) -> str:
        progress = posixpath.join(self.display, "progress.txt")
        lines = [
            f"## Current task: {task.title}",
            "",
            f"Task {task.id}, line {task.line} of {self.path}. Work on this task only.",
            f"When it is done and verified, {tick(task, self._in_table)} in {self.path}, "
            f"and append what you did and learned to {progress}.",
            f"When no unchecked box is left in {self.path}, end your reply with `<promise>COMPLETE</promise>`.",
        ]
        return "\n".join(lines + later_section(self._tasks, task, "Later tasks"))

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []  # never called: marks_done is False


def new_todo(feature: str) -> str:
    """The TODO.md `ralph init --format todo` writes."""
    return (
        f"# {feature}\n"
        "\n"
        "ralph works these tasks top to bottom, one per iteration; the agent ticks each box when the\n"
        "task is done and verified. Keep each task small enough to finish in one iteration.\n"
        "\n"
        "- [ ] Replace this example task with the first real one\n"
        "- [ ] Replace this one too: say how the task is checked (for example: its tests pass)\n"
        "- [ ] Replace or delete this one: add as many '- [ ] task' lines as the work needs\n"
    )


# ---------------------------------------------------------------- shared with fix_plan.py


def read_markdown(path: str, shown: str, missing: Problem) -> str | Problem:
    """The text of a Markdown task file, or what keeps it from being read (`missing` when it does not exist)."""
    try:
        raw = read_file(path, shown, cap=TASK_CAP)
    except RalphError as exc:
        return from_error(exc, shown)
    if raw is None:
        return missing
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8")
        return Problem(shown, "not UTF-8 text", line=len(re.split(r"\r\n|\r|\n", before)))
    if "\x00" in text:  # a task's text goes into a commit message: no NUL can
        return Problem(shown, "a NUL byte (not text)", line=len(re.split(r"\r\n|\r|\n", text[: text.index("\x00")])))
    return text


def block_problems(checklist: Checklist, shown: str) -> list[Problem]:
    """A fence or comment left open hides every box below it: the plan would look done too soon."""
    block = checklist.unclosed
    if block is None:
        return []
    return [Problem(shown, f"{block.what} opened here is never closed, so no task below it counts", block.line)]


def checklist_tasks(items: Iterable[Item], prefix: str) -> tuple[Task, ...]:
    """One task per box, with its position as id: `prefix`1, `prefix`2, ..."""
    return tuple(
        Task(id=f"{prefix}{number}", title=item.text, done=item.checked, line=item.line)
        for number, item in enumerate(items, start=1)
    )


def table_rows(items: Sequence[Item], prefix: str) -> frozenset[str]:
    """The ids checklist_tasks gives the items that are table rows."""
    return frozenset(f"{prefix}{number}" for number, item in enumerate(items, start=1) if item.in_table)


def tick(task: Task, in_table: frozenset[str]) -> str:
    """How the agent ticks `task`'s box: in its list item, or in its table row's cell."""
    if task.id in in_table:
        return f"tick its box in the table row on line {task.line} (the cell `[ ]` becomes `[x]`)"
    return "tick its box (`- [ ]` becomes `- [x]`)"


def later_section(tasks: Sequence[Task], current: Task, title: str) -> list[str]:
    """Prompt lines listing the next open tasks after `current`, so the agent sees where it leads."""
    ids = [task.id for task in tasks]
    if current.id not in ids:
        return []
    waiting = [task for task in tasks[ids.index(current.id) + 1 :] if not task.done]
    if not waiting:
        return []
    lines = ["", f"{title} (do not start them now):"]
    lines += [f"- {task.title}" for task in waiting[:LATER_SHOWN]]
    if len(waiting) > LATER_SHOWN:
        lines.append(f"- ... and {len(waiting) - LATER_SHOWN} more")
    return lines


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> TodoSource:
    """The format registry's opener (plugins/formats.py)."""
    return TodoSource(paths.dir, display_path(paths.dir, os.getcwd()))


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format todo` writes."""
    from ralphloop.templates.prompt import default_template

    return {"TODO.md": new_todo(name), "prompt.md": default_template("todo")}
