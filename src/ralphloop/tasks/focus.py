"""`ralph run -s ID`: any task source narrowed to one task, so the loop works on it until it passes."""

from __future__ import annotations

from ralphloop.errors import RalphError
from ralphloop.protocols import Task, TaskSource, TaskView


class OneTask:
    """The wrapped source, showing only task `task_id`; done when that task is."""

    def __init__(self, source: TaskSource, task_id: str, label: str = "-s/--story") -> None:
        self.source = source
        self.task_id = task_id
        self.label = label
        self.kind = source.kind
        self.path = source.path

    def load(self) -> TaskView:
        view = self.source.load()
        for task in view.tasks:
            if task.id == self.task_id:
                return TaskView(tasks=(task,), next_task=None if task.done else task)
        known = ", ".join(task.id for task in view.tasks[:20]) or "none"
        raise RalphError(f"{self.label} {self.task_id}: no such story in {self.path} (stories: {known})")

    def describe(self, task: Task) -> str:
        return self.source.describe(task)
