"""Any task source narrowed: `ralph run -s ID` (one task, until it passes) and `--resume-from ID`
(the tasks before it in work order are skipped)."""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskSource, TaskView
from ralphloop.project.paths import display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.order import pick_next, waiting_on


def _known(view: TaskView) -> str:
    return ", ".join(task.id for task in view.tasks[:20]) + (" ..." if len(view.tasks) > 20 else "") or "none"


class _Narrowed(SourceBase):
    """Delegates everything to the wrapped source; subclasses narrow `load`."""

    def __init__(self, source: TaskSource) -> None:
        self.source = source
        self.kind = source.kind
        self.path = source.path
        # prd.json's source keeps its path absolute: show it as the user would type it
        self.shown = display_path(source.path, os.getcwd()) if os.path.isabs(source.path) else source.path
        self.marks_done = source.marks_done

    def describe(self, task: Task) -> str:
        return self.source.describe(task)

    def mark_done(self, task: Task, when: str) -> list[str]:
        return self.source.mark_done(task, when)


class OneTask(_Narrowed):
    """Only task `task_id`, whatever its dependencies say (the user asked for it by name); done when it is."""

    def __init__(self, source: TaskSource, task_id: str, label: str = "-s/--story") -> None:
        super().__init__(source)
        self.task_id = task_id
        self.label = label

    def load(self) -> TaskView:
        view = self.source.load()
        for task in view.tasks:
            if task.id == self.task_id:
                others = sum(1 for item in view.tasks if not item.done and item.id != task.id)
                scope = f"story {task.id}"
                return TaskView(tasks=(task,), next_task=None if task.done else task, scope=scope, outside_open=others)
        raise RalphError(f"{self.label} {self.task_id}: no such story in {self.shown} (stories: {_known(view)})")


class ResumeFrom(_Narrowed):
    """The tasks from `task_id` on, in work order; the ones before it are neither worked on nor counted."""

    def __init__(self, source: TaskSource, task_id: str, label: str = "--resume-from") -> None:
        super().__init__(source)
        self.task_id = task_id
        self.label = label

    def load(self) -> TaskView:
        view = self.source.load()
        ids = [task.id for task in view.tasks]
        if self.task_id not in ids:
            raise RalphError(f"{self.label} {self.task_id}: no such story in {self.shown} (stories: {_known(view)})")
        kept = view.tasks[ids.index(self.task_id) :]
        upcoming = pick_next(kept, view.done_ids)
        if upcoming is None and not all(task.done for task in kept):
            # blame a dependency that is really left out of the run, not one that is merely waiting itself
            inside = {task.id for task in kept}
            for task in kept:
                outside = [dep for dep in waiting_on(task, view.tasks) if dep not in inside]
                if not task.done and outside:
                    raise RalphError(
                        f"{self.label} {self.task_id}: story {task.id} depends on {', '.join(outside)}, which "
                        f"{self.label} skips and is not done"
                    )
        skipped = sum(1 for task in view.tasks[: ids.index(self.task_id)] if not task.done)
        scope = f"stories from {self.task_id} on"
        return TaskView(tasks=kept, next_task=upcoming, scope=scope, outside_open=skipped)
