"""PROGRESS.yaml (seed 001's structure): ralph's record of a goal's steps, hook runs and exit, read back
(checked: a damaged file is named, never half-read) and written by a small emitter of its own."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from ralphloop.core.errors import RalphError
from ralphloop.core.hook_spec import HookSpec
from ralphloop.tasks.goal_sprint import count_field, sprint_settings
from ralphloop.tasks.goal_steps import (
    HOOK_STATUSES,
    SPRINT_STATUSES,
    STEP_STATUSES,
    GoalExit,
    GoalProgress,
    HookTask,
    Step,
)


def parse_progress(
    data: Mapping[str, Any], shown: str, project_root: str, folder_name: str, *, sprint: GoalProgress | None = None
) -> GoalProgress:
    """PROGRESS.yaml, checked: a damaged file is named, never half-read. With `sprint` (SPRINT.yaml's
    reading), only the state is read from it: the goal, the settings and the hooks are the sprint's."""
    if data.get("mode", "ralph") != "ralph":
        raise RalphError(f"{shown}: mode: expected ralph")
    status = data.get("status", "in-progress")
    if status not in SPRINT_STATUSES:
        raise RalphError(f"{shown}: status: expected one of {', '.join(SPRINT_STATUSES)}")
    base = sprint or sprint_settings(data, shown, project_root, folder_name)
    stats = _mapping(data.get("stats"), f"{shown}: stats")
    return replace(
        base,
        status=status,
        steps=tuple(
            _step(item, f"{shown}: dynamic-steps[{index}]")
            for index, item in enumerate(_list(data, "dynamic-steps", shown))
        ),
        hook_tasks=tuple(
            _hook_task(item, f"{shown}: hook-tasks[{index}]")
            for index, item in enumerate(_list(data, "hook-tasks", shown))
        ),
        exit=_exit(_mapping(data.get("ralph-exit"), f"{shown}: ralph-exit"), f"{shown}: ralph-exit"),
        started_at=_text_or_none(stats.get("started-at"), f"{shown}: stats.started-at"),
        current_iteration=count_field(stats.get("current-iteration"), f"{shown}: stats.current-iteration", 0, 0),
        max_iterations=_limit(stats.get("max-iterations"), f"{shown}: stats.max-iterations"),
        idle_iterations=count_field(stats.get("idle-iterations"), f"{shown}: stats.idle-iterations", 0, 0),
    )


# stats.max-iterations of a run without an iteration limit. Not null: that reads as "not recorded". Not seed 001's
# 1000000: ralph would not stop there, and `-n 1000000` (the highest limit it takes) is a real limit of that number.
UNLIMITED = "unlimited"


def _limit(value: Any, where: str) -> int | None:
    """stats.max-iterations as written by `progress_data`: a number, `unlimited` (or null, from an older ralph)."""
    if value in (None, UNLIMITED):
        return None
    return count_field(value, f"{where} (or {UNLIMITED})", 0, 0) or None


def _list(data: Mapping[str, Any], key: str, shown: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RalphError(f"{shown}: {key}: expected a list")
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RalphError(f"{where}: expected a mapping")
    return value


def _text_or_none(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RalphError(f"{where}: expected text")
    return str(value)


def _step(item: Any, where: str) -> Step:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("prompt"), str):
        raise RalphError(f"{where}: expected {{id, prompt, status}}")
    status = item.get("status", "pending")
    if status not in STEP_STATUSES:
        raise RalphError(f"{where}: status: expected one of {', '.join(STEP_STATUSES)}")
    return Step(
        id=item["id"],
        prompt=item["prompt"],
        status=status,
        added_at=_text_or_none(item.get("added-at"), f"{where}.added-at") or "",
        added_in_iteration=count_field(item.get("added-in-iteration"), f"{where}.added-in-iteration", 0, 0),
        completed_at=_text_or_none(item.get("completed-at"), f"{where}.completed-at"),
    )


def _hook_task(item: Any, where: str) -> HookTask:
    if not isinstance(item, dict) or not isinstance(item.get("hook-id"), str):
        raise RalphError(f"{where}: expected {{iteration, hook-id, status}}")
    status = item.get("status")
    if status not in HOOK_STATUSES:
        raise RalphError(f"{where}: status: expected one of {', '.join(HOOK_STATUSES)}")
    code = item.get("exit-code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise RalphError(f"{where}: exit-code: expected a number")
    return HookTask(
        iteration=count_field(item.get("iteration"), f"{where}.iteration", 0, 0),
        hook_id=item["hook-id"],
        status=status,
        spawned_at=_text_or_none(item.get("spawned-at"), f"{where}.spawned-at") or "",
        completed_at=_text_or_none(item.get("completed-at"), f"{where}.completed-at"),
        exit_code=code,
    )


def _exit(data: Mapping[str, Any], where: str) -> GoalExit:
    iteration = data.get("iteration")
    if iteration is not None and (isinstance(iteration, bool) or not isinstance(iteration, int)):
        raise RalphError(f"{where}.iteration: expected a number")
    return GoalExit(
        detected_at=_text_or_none(data.get("detected-at"), f"{where}.detected-at"),
        iteration=iteration,
        final_summary=_text_or_none(data.get("final-summary"), f"{where}.final-summary"),
    )


def progress_data(progress: GoalProgress) -> dict[str, Any]:
    """PROGRESS.yaml's content, in seed 001's order."""
    return {
        "sprint-id": progress.sprint_id,
        "status": progress.status,
        "mode": "ralph",
        "goal": progress.goal,
        "ralph": {"idle-threshold": progress.idle_threshold, "min-iterations": progress.min_iterations},
        "per-iteration-hooks": [_hook_data(hook) for hook in progress.hooks],
        "dynamic-steps": [_step_data(step) for step in progress.steps],
        "hook-tasks": [
            {
                "iteration": task.iteration,
                "hook-id": task.hook_id,
                "status": task.status,
                "spawned-at": task.spawned_at,
                "completed-at": task.completed_at,
                "exit-code": task.exit_code,
            }
            for task in progress.hook_tasks
        ],
        "ralph-exit": {
            "detected-at": progress.exit.detected_at,
            "iteration": progress.exit.iteration,
            "final-summary": progress.exit.final_summary,
        },
        "stats": {
            "started-at": progress.started_at,
            "current-iteration": progress.current_iteration,
            "max-iterations": UNLIMITED if progress.max_iterations is None else progress.max_iterations,
            "idle-iterations": progress.idle_iterations,
        },
    }


def _hook_data(hook: HookSpec) -> dict[str, Any]:
    # a resolved workflow hook is written as its reference: PROGRESS.yaml mirrors SPRINT.yaml
    body: dict[str, Any] = {"workflow": hook.workflow} if hook.workflow else {hook.kind: hook.body}
    return {"id": hook.id, **body, "parallel": hook.parallel, "enabled": hook.enabled}


def _step_data(step: Step) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": step.id,
        "prompt": step.prompt,
        "status": step.status,
        "added-at": step.added_at,
        "added-in-iteration": step.added_in_iteration,
    }
    if step.completed_at:
        data["completed-at"] = step.completed_at
    return data


def stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def dump_progress(progress: GoalProgress) -> str:
    return dump_data(progress_data(progress))


def dump_data(data: dict[str, Any]) -> str:
    """PROGRESS.yaml's text. Its shape is fixed (mappings, lists, strings, numbers, null), so it is written
    here rather than by PyYAML, which takes ~100 ms for a file of 500 steps and 1,000 hook records, every
    time the file is saved; tests read every output back with PyYAML's safe loader."""
    lines: list[str] = []
    _mapping_lines(data, 0, lines)
    return "\n".join(lines) + "\n"


def _mapping_lines(data: Mapping[str, Any], indent: int, lines: list[str], first: str | None = None) -> None:
    pad = " " * indent
    for number, (key, value) in enumerate(data.items()):
        lead = first if number == 0 and first is not None else pad
        if isinstance(value, dict) and value:
            lines.append(f"{lead}{key}:")
            _mapping_lines(value, indent + 2, lines)
        elif isinstance(value, list) and value:
            lines.append(f"{lead}{key}:")
            for item in value:  # list items at the key's own indentation, as PyYAML writes them
                if isinstance(item, dict) and item:
                    _mapping_lines(item, indent + 2, lines, first=f"{pad}- ")
                else:
                    lines.append(f"{pad}- {_scalar(item, indent + 2)}")
        else:
            lines.append(f"{lead}{key}: {_scalar(value, indent + 2)}")


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# YAML 1.1 reads these bare words as booleans or null: they are quoted
_RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
# What YAML does not allow raw in a stream, and the line breaks it would fold: written as \u escapes
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # half a character: YAML cannot hold it, even escaped


def _scalar(value: Any, indent: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict | list):  # only empty ones get here
        return "{}" if isinstance(value, dict) else "[]"
    text = _SURROGATE.sub("\ufffd", str(value))
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    if _blockable(text):
        pad = " " * indent
        body = "\n".join(pad + line if line else "" for line in text.rstrip("\n").split("\n"))
        return ("|" if text.endswith("\n") else "|-") + "\n" + body
    quoted = json.dumps(text, ensure_ascii=False)
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)


def _blockable(text: str) -> bool:
    """Multi-line text a `|` block keeps exactly: one final newline at most, no leading space on its first
    line (that would need an indentation indicator), no trailing blanks, nothing YAML would change."""
    return (
        "\n" in text
        and not text.endswith("\n\n")
        and not text[:1].isspace()
        and "\r" not in text
        and "\t" not in text
        and "\x85" not in text
        and not _UNSAFE.search(text)
        and not any(line != line.rstrip(" ") for line in text.split("\n"))
    )
