"""The steps of an iteration every plain task format shares; a format overrides only what it does differently.

prd.json, TODO.md and fix_plan.md do nothing of their own (the agent edits the file); story specs mark a
story done when the agent says DONE for it and its checks pass; goal mode (tasks/goal.py) overrides most.
"""

from __future__ import annotations

from ralphloop.core.hook_spec import HookEnd, HookSpec
from ralphloop.core.problems import Problem
from ralphloop.core.protocols import SettleFacts, Settlement, Task, TaskView


class SourceBase:
    """Defaults for TaskSource's iteration steps."""

    kind: str
    path: str
    marks_done: bool = False

    def load(self) -> TaskView:
        raise NotImplementedError

    def problems(self) -> list[Problem]:
        return []  # `load` raises its first problem: all a plain format knows

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []  # only formats with marks_done record a task themselves

    def begin(self, number: int, max_iterations: int | None, now: str) -> None:
        return None

    def after_agent(self) -> list[str]:
        return []

    def settle(self, facts: SettleFacts) -> Settlement:
        """Mark the task done when the format does that itself and the attempt earned it; a claim the
        quality checks refute is a failed attempt."""
        failed = (
            f"quality checks fail: {', '.join(facts.gate_failures)}" if facts.claimed and facts.gate_failures else None
        )
        if not (self.marks_done and facts.says_done and facts.clean and failed is None and facts.broken is None):
            return Settlement(view=facts.view, failed=failed)
        notes = self.mark_done(facts.task, facts.now)
        return Settlement(view=self.load(), notes=tuple(notes))

    def hook_scope(self, task_id: str) -> tuple[str, str] | None:
        return None  # the feature and the task

    def iteration_hooks(self) -> tuple[HookSpec, ...]:
        return ()

    def record_hook(self, number: int, hook_id: str, ended: HookEnd | None, now: str) -> str | None:
        return None
