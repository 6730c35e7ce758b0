"""Why a SPRINT.yaml is not one ralph runs (pure but for reading the file again to name a key's line): m42-sprint
writes SPRINT.yamls for its other workflows too (`workflow: plugin-development` with a list of `steps:`), and an
early one with none at all (`goals:` as a list). Each refusal is one line naming the file, the key's line, the
near miss and what to write (samples: tests/fixtures/wild/TESTS.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.tasks.goal_sprint import RALPH_WORKFLOW
from ralphloop.words.textsafe import one_line


def sprint_refusal(data: Mapping[str, Any], path: str, shown: str) -> str | None:
    """Why ralph does not run this SPRINT.yaml, in one line naming the key's line, the near miss and what to
    write; None when its `workflow:` is ralph's and its goal is text (sprint_settings checks the rest)."""
    workflow = data.get("workflow")
    goal = data.get("goal")
    if workflow == RALPH_WORKFLOW and isinstance(goal, str) and goal.strip():
        return None
    lines = _KeyLines(path, shown)
    if workflow == RALPH_WORKFLOW:
        return _goal_refusal(data, lines, shown)
    steps = _planned_steps(data, lines)
    if workflow is None:
        place, missing = (
            (f"{shown}:{lines.of('workflow')}", "`workflow:` is empty")
            if "workflow" in data
            else (
                shown,
                "no `workflow:` key",
            )
        )
        if isinstance(goal, str) and goal.strip():
            return f"{place}: {missing}: ralph runs a SPRINT.yaml only with `workflow: ralph`: write that line{steps}"
        return (
            f"{place}: {missing}: ralph runs a SPRINT.yaml only with `workflow: ralph` and a `goal:` "
            f"text{_goal_near_miss(data, lines)}{steps}; write both"
        )
    got = repr(one_line(workflow, 40)) if isinstance(workflow, str) else _kind(workflow)
    return (
        f"{shown}:{lines.of('workflow')}: workflow: expected ralph, not {got} (an m42-sprint workflow): ralph runs "
        f"a SPRINT.yaml only with `workflow: ralph` and a `goal:` text, and plans its own steps{steps}; write those "
        "two keys, or run this sprint with m42-sprint"
    )


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else "text"


def _goal_refusal(data: Mapping[str, Any], lines: _KeyLines, shown: str) -> str:
    near = _goal_near_miss(data, lines)
    where = f"{shown}:{lines.of('goal')}" if "goal" in data else shown
    if "goal" in data and not isinstance(data["goal"], str):
        near = f" (this one is {_kind(data['goal'])})"
    if near:
        return f"{where}: goal: expected the goal as text{near}; write it as `goal: |` and the text below it"
    return f"{where}: goal: expected the goal as text (`goal: |` and the text below it)"


def _goal_near_miss(data: Mapping[str, Any], lines: _KeyLines) -> str:
    for key in ("goals", "objective", "objectives", "description"):
        if key in data:
            return f" (this one has `{key}:` at line {lines.of(key)}, {_kind(data[key])}, where ralph reads `goal:`)"
    return ""


def _planned_steps(data: Mapping[str, Any], lines: _KeyLines) -> str:
    """m42-sprint's fixed steps (`steps:`, or lists under `collections:`), which ralph does not run."""
    steps = data.get("steps")
    if isinstance(steps, list) and steps:
        return _fixed_steps(len(steps), f"`steps:` at line {lines.of('steps')}")
    collections = data.get("collections")
    if isinstance(collections, dict):
        found = [(name, items) for name, items in collections.items() if isinstance(items, list) and items]
        if found:
            name, items = found[0]
            key = f"collections.{one_line(str(name), 40)}"
            return _fixed_steps(len(items), f"`{key}` at line {lines.of('collections')}")
    return ""


def _fixed_steps(count: int, where: str) -> str:
    if count > 1:
        return f" (the {count} steps under {where} are m42-sprint's: ralph does not read them)"
    return f" (the step under {where} is m42-sprint's: ralph does not read it)"


class _KeyLines:
    """The line of each top-level key of a YAML file, read only when a refusal names one."""

    def __init__(self, path: str, shown: str) -> None:
        self.path, self.shown = path, shown
        self._text: str | None = None

    def of(self, key: str) -> int:
        if self._text is None:
            try:
                self._text = (read_file(self.path, self.shown, cap=TASK_CAP) or b"").decode("utf-8", "replace")
            except RalphError:
                self._text = ""
        found = re.search(rf"^[\"']?{re.escape(key)}[\"']?[ \t]*:", self._text, re.MULTILINE)
        return self._text.count("\n", 0, found.start()) + 1 if found else 1
