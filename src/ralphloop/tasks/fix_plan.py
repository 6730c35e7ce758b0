"""seed 000's fix plan (frankbria/ralph-claude-code): PROMPT.md + fix_plan.md (or @fix_plan.md), in the
workspace or its .ralph/ subfolder; a prioritised checklist the agent works top down, ticking items.

The plan is complete when every box is ticked except those under an optional heading (at any depth):
Optional, Future, Nice to Have, ... alone or as a part of the heading ("LOW — Nice to have", "Phase 5 Future
Enhancements"). tasks/sections.py says which, and in what words every prompt names them. Those are ideas the loop
must not wait for, so they are not tasks at all. Ids are positions among the counted boxes (F1, F2, ...), as in TODO.md.
"""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskView
from ralphloop.plugins.detect import RALPH_DIR, fix_plan_file
from ralphloop.plugins.formats import missing_message
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.bullets import near_miss, prose_miss
from ralphloop.tasks.checklist import Item, scan_checklist
from ralphloop.tasks.order import pick_next
from ralphloop.tasks.problems import Problem, raise_first, validate_in
from ralphloop.tasks.sections import OPTIONAL_SECTIONS, optional_section
from ralphloop.tasks.todo_md import block_problems, checklist_tasks, later_section, read_markdown, table_rows, tick

PROMPT_NAME = "PROMPT.md"


def find_fix_plan(folder: str) -> str | None:
    """The fix plan of `folder`: fix_plan.md, then @fix_plan.md, in `folder`, then in `folder`/.ralph/."""
    return fix_plan_file(folder)  # detect.py's search, so that detection and loading never disagree


def find_prompt(folder: str) -> str | None:
    """PROMPT.md in `folder` or `folder`/.ralph/, the one beside the fix plan first."""
    places = [folder, os.path.join(folder, RALPH_DIR)]
    plan = find_fix_plan(folder)
    if plan is not None and os.path.dirname(plan) == places[1]:
        places.reverse()
    for where in places:
        path = os.path.join(where, PROMPT_NAME)
        if os.path.lexists(path):  # a FIFO is found, for the template reader to refuse by name
            return path
    return None


def required(headings: tuple[str, ...]) -> bool:
    """Whether items under the heading path `headings` are tasks: under no optional heading."""
    return not any(optional_section(heading) for heading in headings)


def counts(item: Item) -> bool:
    """Whether the item is a task: it is under no optional heading."""
    return required(item.headings)


def fix_plan_problems(path: str, display: str) -> list[Problem]:
    """Everything wrong with the fix plan at `path`, for `ralph validate`; [] when it loads."""
    return _check(path, display)[1]


def _check(path: str, display: str) -> tuple[list[Item], list[Problem]]:
    text = read_markdown(path, display, Problem(display, "file not found"))
    if isinstance(text, Problem):
        return [], [text]
    checklist = scan_checklist(text)
    problems = block_problems(checklist, display)
    items = [item for item in checklist.items if counts(item)]
    if not items:
        fix = f"{validate_in(_workspace_of(display))} --fix"
        if missed := near_miss(text, checklist, required, fix):
            problems.append(Problem(display, missed[1], missed[0]))
        elif checklist.items:
            where = " outside Optional, Future, Nice to Have and other optional sections"
            problems.append(Problem(display, f"no tasks{where} (write them as '- [ ] task' lines)"))
        else:
            line, message = prose_miss(text, checklist)
            problems.append(Problem(display, message, line))
    return items, problems


def _workspace_of(plan: str) -> str:
    """The folder whose workspace a plan is (`.ralph/fix_plan.md` is the project root's, seed 000's layout)."""
    folder = os.path.dirname(plan)
    if os.path.basename(folder) == RALPH_DIR:
        folder = os.path.dirname(folder)
    return folder or "."


class FixPlanSource(SourceBase):
    """A fix_plan.md (or @fix_plan.md)."""

    kind = "fix-plan"
    marks_done = False  # the agent ticks the box itself

    def __init__(self, path: str, display: str) -> None:
        self.file = path
        self.path = display
        self._tasks: tuple[Task, ...] = ()  # as last loaded: describe() lists the open items after the current one
        self._in_table: frozenset[str] = frozenset()  # the ids of items that are table rows

    def load(self) -> TaskView:
        items, problems = _check(self.file, self.path)
        raise_first(problems, validate_in(os.path.dirname(self.path) or "."))
        self._tasks = checklist_tasks(items, "F")
        self._in_table = table_rows(items, "F")
        return TaskView(tasks=self._tasks, next_task=pick_next(self._tasks))

    def describe(self, task: Task) -> str:
        lines = [
            f"## Current task: {task.title}",
            "",
            f"Item {task.id}, line {task.line} of {self.path}. Work on this item only.",
            f"When it is done and verified, {tick(task, self._in_table)} in {self.path}.",
            f"When every item is checked, except those in {OPTIONAL_SECTIONS}, "
            "end your reply with `<promise>COMPLETE</promise>`.",
        ]
        return "\n".join(lines + later_section(self._tasks, task, "Later items"))

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []  # never called: marks_done is False


def new_fix_plan(feature: str) -> str:
    """The fix_plan.md `ralph init --format fix-plan` writes."""
    return (
        f"# Fix plan: {feature}\n"
        "\n"
        "The agent works the top unchecked item first and ticks it when it is done and verified.\n"
        "ralph does not wait for the items under Optional.\n"
        "\n"
        "## High Priority\n"
        "- [ ] Replace this example item with the most important piece of work\n"
        "- [ ] Replace this one too: keep each item small enough to finish in one iteration\n"
        "\n"
        "## Medium Priority\n"
        "- [ ] Replace this example item with work that can wait for the above\n"
        "\n"
        "## Optional\n"
        "- [ ] Replace this example with an idea the plan can be complete without\n"
    )


def new_prompt_md(feature: str, plan_file: str = "fix_plan.md") -> str:
    """The PROMPT.md `ralph init --format fix-plan` writes beside `plan_file`."""
    alias = " (`@fix_plan.md` in older layouts)" if plan_file == "fix_plan.md" else ""
    return f"""# Ralph Agent Instructions: {feature}

You are an autonomous development agent. ralph starts you fresh for every iteration of a loop:
what you learn must be written down to survive.

## Context files

- `{plan_file}`{alias}: the prioritised checklist of work; the top unchecked item is yours
- `progress.txt`: the log of earlier iterations (its newest entries are below)
- `specs/`: detailed requirements, when present

## Workflow

1. Work on the **current task** named below: the top unchecked item of `{plan_file}`.
2. Read the relevant code, the specs and the recent progress before you change anything.
3. Implement it with tests, then run the project's checks (tests, typecheck, lint).
4. When every check passes:
   - commit your changes with a message that names the item,
   - tick the item (`- [ ]` becomes `- [x]`) in `{plan_file}`,
   - add any work you found as new unchecked items in the right section,
   - append what you did and learned to `progress.txt`.
5. If, and only if, every item is checked, except those in {OPTIONAL_SECTIONS},
   end your reply with `<promise>COMPLETE</promise>`.

## Telling ralph what happened

ralph checks every completion claim against `{plan_file}` before it believes it.

- `ralph signal complete` when every required item is checked
- `ralph signal blocked "reason"` when something outside your reach stops you
- `ralph signal learn "text"` for a short lesson the next iteration should know

Or end your reply with a status block:

```
---RALPH_STATUS---
STATUS: IN_PROGRESS | COMPLETE | BLOCKED
TASKS_COMPLETED_THIS_LOOP: <number>
FILES_MODIFIED: <number>
TESTS_STATUS: PASSING | FAILING | NOT_RUN
WORK_TYPE: IMPLEMENTATION | TESTING | DOCUMENTATION | REFACTORING
EXIT_SIGNAL: false | true
RECOMMENDATION: <one line: what the next iteration should do>
---END_RALPH_STATUS---
```

## Rules

- ONE item per iteration; stop when it is done.
- Never commit broken code, and never tick an item while its checks fail.
- If you are blocked, say why in `progress.txt` and stop; leave the item unchecked.
- Nobody answers questions during the loop: decide yourself and note the decision in `progress.txt`.
"""


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> FixPlanSource:
    """The format registry's opener (plugins/formats.py)."""
    plan = fix_plan_file(paths.dir)
    if plan is None:
        raise RalphError(missing_message(paths.display()))
    return FixPlanSource(plan, display_path(plan, os.getcwd()))


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format fix-plan` writes (seed 000's pair)."""
    return {"fix_plan.md": new_fix_plan(name), "PROMPT.md": new_prompt_md(name)}
