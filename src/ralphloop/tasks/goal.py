"""Goal workspaces (seed 001): SPRINT.yaml says what to reach, PROGRESS.yaml is where ralph keeps the
steps the agent plans, the hook runs and the exit.

SPRINT.yaml is the user's: `workflow: ralph`, `goal`, optional `ralph: {idle-threshold, min-iterations}`,
`per-iteration-hooks` and `sprint-id`; it is read at every iteration, so an edited goal or hook takes
effect at the next one. PROGRESS.yaml is ralph's (written atomically, like every state file); the agent
reports through its JSON result and never edits it. A folder with only a PROGRESS.yaml (`mode: ralph`)
works too: it then holds the goal and the hooks itself.

The tasks the loop sees are the steps, plus one task for the goal itself (id `goal`), done once the goal
is complete: it is the focus of planning and reflecting iterations, and it keeps the loop going when
every step so far is done.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ralphloop.analysis.json_result import JsonResult
from ralphloop.config import read_yaml_mapping
from ralphloop.errors import RalphError
from ralphloop.hooks.spec import HookSpec
from ralphloop.protocols import SettleFacts, Settlement, Task, TaskView
from ralphloop.state.store import atomic_write_text
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.goal_steps import (
    DEFAULT_IDLE_THRESHOLD,
    EXECUTING,
    GOAL_TASK_ID,
    HOOK_STATUSES,
    SPRINT_STATUSES,
    STEP_STATUSES,
    GoalExit,
    GoalProgress,
    HookTask,
    Step,
    apply_result,
    begin,
    focus,
    mode_of,
    mode_section,
    phase_id,
    record_hook,
)
from ralphloop.tasks.problems import Problem
from ralphloop.textsafe import one_line

SPRINT_NAME = "SPRINT.yaml"
PROGRESS_NAME = "PROGRESS.yaml"
WORKFLOWS_DIR = os.path.join(".claude", "workflows")
# `.claude/workflows/ralph.yaml` defines hooks a SPRINT.yaml can switch on by id (seed 001).
RALPH_WORKFLOW = "ralph"
MAX_HOOK_ID = 100  # it names the hook's log files
_WORKFLOW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")


class GoalSource(SourceBase):
    """A goal workspace as a task source and as the store of its progress."""

    kind = "goal"
    marks_done = False  # ralph records steps from the JSON result, not from DONE tags

    def __init__(self, folder: str, display: str, project_root: str) -> None:
        self.folder = folder
        self.display = display.rstrip("/") or display
        self.project_root = project_root
        self.sprint_file = os.path.join(folder, SPRINT_NAME)
        self.progress_file = os.path.join(folder, PROGRESS_NAME)
        has_sprint = os.path.isfile(self.sprint_file)
        self.path = self.sprint_file if has_sprint else self.progress_file
        # PROGRESS.yaml as last read or written, by its stat: parsing it is the costly part of an
        # iteration once it holds hundreds of records, and ralph is its only writer (the agent may still
        # edit it: a changed stat reads it again).
        self._saved: tuple[tuple[int, int, int], dict[str, Any]] | None = None
        self._parsed: tuple[tuple[int, int, int], GoalProgress | None, GoalProgress] | None = None
        self._sprint: GoalProgress | None = None  # SPRINT.yaml as last read
        self._own: tuple[tuple[int, int, int], GoalProgress] | None = None  # as ralph last wrote it

    def _shown(self, name: str) -> str:
        return f"{self.display}/{name}"

    # -------------------------------------------------------------- the store

    def progress(self) -> GoalProgress:
        """PROGRESS.yaml with SPRINT.yaml's goal, settings and hooks over it (nothing is written)."""
        sprint = self._sprint = self._read_sprint()
        saved = self._read_progress(sprint)
        if saved is not None:
            return saved
        if sprint is None:
            raise RalphError(f"{self.display}: neither {SPRINT_NAME} nor {PROGRESS_NAME} found")
        return sprint

    def save(self, progress: GoalProgress) -> None:
        data = progress_data(progress)
        atomic_write_text(self.progress_file, _dump(data))
        key = _stat_key(self.progress_file)
        self._saved = (key, data) if key else None
        self._parsed = (key, self._sprint, progress) if key else None
        self._own = (key, progress) if key else None

    def _read_sprint(self) -> GoalProgress | None:
        shown = self._shown(SPRINT_NAME)
        data = read_yaml_mapping(self.sprint_file, shown)
        if data is None:
            if os.path.isfile(self.sprint_file):
                raise RalphError(f"{shown}: empty (write `workflow: ralph` and a `goal`)")
            return None
        workflow = data.get("workflow")
        if workflow != "ralph":
            raise RalphError(
                f"{shown}: workflow: expected ralph, got {one_line(str(workflow), 40)!r} "
                "(ralph runs goal workflows only)"
            )
        return _settings(data, shown, self.project_root, os.path.basename(os.path.abspath(self.folder)))

    def _read_progress(self, sprint: GoalProgress | None) -> GoalProgress | None:
        shown = self._shown(PROGRESS_NAME)
        key = _stat_key(self.progress_file)
        if key is not None and self._parsed is not None and self._parsed[:2] == (key, sprint):
            return self._parsed[2]
        if key is not None and self._saved is not None and self._saved[0] == key:
            data: dict[str, Any] | None = self._saved[1]
        else:
            data = read_yaml_mapping(self.progress_file, shown)
            self._saved = (key, data) if key and data is not None else None
        if data is None:
            return None
        folder_name = os.path.basename(os.path.abspath(self.folder))
        # with a SPRINT.yaml, its goal, settings and hooks replace PROGRESS.yaml's copies, which are not read
        progress = parse_progress(data, shown, self.project_root, folder_name, sprint=sprint)
        self._parsed = (key, sprint, progress) if key else None
        return progress

    # -------------------------------------------------------------- the task source

    def load(self) -> TaskView:
        progress = self.progress()
        steps = tuple(
            Task(id=step.id, title=one_line(step.prompt, 120), done=not step.pending, description=step.prompt)
            for step in progress.steps
        )
        goal = Task(
            id=GOAL_TASK_ID,
            title=one_line(progress.goal, 120),
            done=progress.complete,
            description=progress.goal,
        )
        step = focus(progress)
        if progress.complete:
            current = None
        elif mode_of(progress) == EXECUTING and step is not None:
            current = next(task for task in steps if task.id == step.id)
        else:
            current = replace(goal, title=f"{mode_of(progress)}: {goal.title}")
        return TaskView(tasks=(*steps, goal), next_task=current)

    def describe(self, task: Task) -> str:
        # read again (cheap when nothing changed): a hook may have edited SPRINT.yaml since the last load
        return mode_section(self.progress(), self._shown(PROGRESS_NAME))

    def restore_own(self) -> bool:
        """PROGRESS.yaml as ralph last wrote it, when anything else changed it since (the agent must report
        through its JSON result: an edited `ralph-exit` must not complete the goal)."""
        if self._own is None or _stat_key(self.progress_file) == self._own[0]:
            return False
        self.save(self._own[1])
        return True

    def saved_progress(self) -> GoalProgress:
        """PROGRESS.yaml with the last valid SPRINT.yaml over it: for records (a hook's end) that must be
        kept while the user is in the middle of editing SPRINT.yaml."""
        try:
            return self.progress()
        except RalphError:
            saved = self._read_progress(self._sprint)
            if saved is None:
                raise
            return saved

    # -------------------------------------------------------------- the iteration's steps

    def begin(self, number: int, max_iterations: int | None, now: str) -> None:
        self.save(begin(self.progress(), now, max_iterations))

    def after_agent(self) -> list[str]:
        if not self.restore_own():
            return []
        return ["PROGRESS.yaml was edited during the iteration: ralph's copy is back (report through the JSON result)"]

    def settle(self, facts: SettleFacts) -> Settlement:
        """The agent's JSON result applied to the steps (seed 001's exit detection). While SPRINT.yaml is
        invalid (the user is editing it), the result is applied over the last valid one: it is kept, and
        the loop then stops on the invalid file."""
        refused = None
        if facts.completion_claimed and not facts.clean:
            refused = "the agent's run did not end cleanly: its completion claim is not taken"
        if not facts.clean:
            return Settlement(view=facts.view, refused=refused)
        result = facts.json_result if isinstance(facts.json_result, JsonResult) else None
        try:
            progress = self.saved_progress()
            progress, applied = apply_result(
                progress, result, facts.json_error, now=facts.now, gate_failures=facts.gate_failures
            )
            self.save(progress)
        except RalphError as exc:
            return Settlement(view=facts.view, notes=(f"goal progress invalid: {exc}",), error=str(exc))
        if facts.completion_claimed and (result is None or result.status != "goal-complete"):
            refused = (
                "in goal mode the goal is complete when a JSON result with status goal-complete says so, "
                "and ralph accepts it"
            )
        try:
            view, error = self.load(), None
        except RalphError as exc:
            view, error = facts.view, str(exc)
        return Settlement(
            view=view,
            notes=applied.notes,
            info=applied.info,
            prompt_notes=applied.prompt_notes,
            refused=applied.refused or refused,
            refused_told=applied.refused is not None,
            valid=applied.valid,
            error=error or facts.broken,
        )

    def hook_scope(self, task_id: str) -> tuple[str, str] | None:
        progress = self.progress()
        return progress.sprint_id, phase_id(progress)

    def iteration_hooks(self) -> tuple[HookSpec, ...]:
        return self.progress().hooks

    def record_hook(self, number: int, hook_id: str, run: object | None, now: str) -> str | None:
        """hook-tasks in PROGRESS.yaml: spawned when a hook starts, completed or failed when it ends."""
        try:
            progress = self.saved_progress()
            spawned = next(
                (t.spawned_at for t in progress.hook_tasks if (t.iteration, t.hook_id) == (number, hook_id)), now
            )
            if run is None:
                task = HookTask(number, hook_id, "spawned", now)
            else:
                ok, code = bool(getattr(run, "ok", False)), getattr(run, "exit_code", None)
                task = HookTask(number, hook_id, "completed" if ok else "failed", spawned, now, code)
            self.save(record_hook(progress, task))
        except (RalphError, OSError) as exc:  # a hook's record must never stop the loop
            return f"could not record hook {hook_id} of iteration {number}: {exc}"
        return None


def goal_problems(folder: str, display: str, project_root: str) -> list[Problem]:
    """What is wrong with a goal workspace, for `ralph validate` ([] when it loads). Its files are read
    as a run reads them, so the first problem is the one `ralph run` would stop at."""
    try:
        GoalSource(folder, display, project_root).load()
    except RalphError as exc:
        where, _, message = str(exc).partition(": ")
        return [Problem(where, message) if message else Problem(display, where)]
    return []


# ------------------------------------------------------------------ SPRINT.yaml


def _settings(data: Mapping[str, Any], shown: str, project_root: str, folder_name: str) -> GoalProgress:
    goal = data.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise RalphError(f"{shown}: goal: expected the goal as text")
    ralph = data.get("ralph") or {}
    if not isinstance(ralph, dict):
        raise RalphError(f"{shown}: ralph: expected a mapping (idle-threshold, min-iterations)")
    sprint_id = data.get("sprint-id", folder_name)
    if not isinstance(sprint_id, str | int) or isinstance(sprint_id, bool) or not str(sprint_id).strip():
        raise RalphError(f"{shown}: sprint-id: expected a name")
    return GoalProgress(
        sprint_id=str(sprint_id).strip(),
        goal=goal,
        idle_threshold=_count(ralph.get("idle-threshold"), f"{shown}: ralph.idle-threshold", 1, DEFAULT_IDLE_THRESHOLD),
        min_iterations=_count(ralph.get("min-iterations"), f"{shown}: ralph.min-iterations", 0, 0),
        hooks=_hooks(data.get("per-iteration-hooks"), shown, project_root),
    )


def _count(value: Any, where: str, least: int, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise RalphError(f"{where}: expected a whole number, {least} or more")
    return value


def _hooks(value: Any, shown: str, project_root: str) -> tuple[HookSpec, ...]:
    """A list of hook definitions, or seed 001's mapping `{id: {enabled: true}}` that switches on
    hooks defined in .claude/workflows/ralph.yaml (where they are off unless switched on)."""
    if value is None:
        return ()
    if isinstance(value, list):
        return _hook_list(value, shown, project_root, enabled_default=True)
    if not isinstance(value, dict):
        raise RalphError(f"{shown}: per-iteration-hooks: expected a list of hooks (or a mapping of hook ids)")
    base_path = os.path.join(project_root, WORKFLOWS_DIR, f"{RALPH_WORKFLOW}.yaml")
    base_shown = os.path.join(WORKFLOWS_DIR, f"{RALPH_WORKFLOW}.yaml")
    base_data = read_yaml_mapping(base_path, base_shown) or {}
    base_list = base_data.get("per-iteration-hooks") or []
    if not isinstance(base_list, list):
        raise RalphError(f"{base_shown}: per-iteration-hooks: expected a list of hooks")
    base = {hook.id: hook for hook in _hook_list(base_list, base_shown, project_root, enabled_default=False)}
    hooks = list(base.values())
    for hook_id, override in value.items():
        where = f"{shown}: per-iteration-hooks.{hook_id}"
        if hook_id not in base:
            raise RalphError(f"{where}: no hook {str(hook_id)!r} in {base_shown} (define it there, or list it here)")
        if not isinstance(override, dict):
            raise RalphError(f"{where}: expected a mapping such as {{enabled: true}}")
        hook = base[hook_id]
        enabled = _flag(override.get("enabled"), f"{where}.enabled", hook.enabled)
        parallel = _flag(override.get("parallel"), f"{where}.parallel", hook.parallel)
        updated = replace(hook, enabled=enabled, parallel=parallel)
        hooks = [updated if item.id == hook_id else item for item in hooks]
    return tuple(_resolved(hook, shown, project_root) for hook in hooks)


def _hook_list(items: list[Any], shown: str, project_root: str, *, enabled_default: bool) -> tuple[HookSpec, ...]:
    hooks: list[HookSpec] = []
    for index, item in enumerate(items):
        where = f"{shown}: per-iteration-hooks[{index}]"
        if not isinstance(item, dict):
            raise RalphError(f"{where}: expected a mapping with id and prompt, command or workflow")
        hook_id = item.get("id")
        if isinstance(hook_id, bool):
            raise RalphError(f"{where}: id: YAML reads a bare on/off/yes/no as true or false: quote the id")
        if not isinstance(hook_id, str) or not hook_id.strip() or len(hook_id) > MAX_HOOK_ID:
            raise RalphError(f"{where}: id: expected a name of at most {MAX_HOOK_ID} characters")
        where = f"{shown}: per-iteration-hooks {hook_id!r}"
        kinds = [kind for kind in ("prompt", "command", "workflow") if item.get(kind) is not None]
        if len(kinds) != 1:
            raise RalphError(f"{where}: give exactly one of prompt, command or workflow")
        body = item[kinds[0]]
        if not isinstance(body, str) or not body.strip():
            raise RalphError(f"{where}: {kinds[0]}: expected text")
        if any(hook.id == hook_id for hook in hooks):
            raise RalphError(f"{where}: the id is used twice")
        hooks.append(
            HookSpec(
                id=hook_id,
                kind=kinds[0],
                body=body,
                parallel=_flag(item.get("parallel"), f"{where}.parallel", True),
                enabled=_flag(item.get("enabled"), f"{where}.enabled", enabled_default),
                workflow=body.strip() if kinds[0] == "workflow" else None,
            )
        )
    return tuple(hook if hook.kind != "workflow" else _resolved(hook, shown, project_root) for hook in hooks)


def _flag(value: Any, where: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RalphError(f"{where}: expected true or false")
    return value


def _resolved(hook: HookSpec, shown: str, project_root: str) -> HookSpec:
    """A `workflow:` hook as the prompt or command its file holds. A disabled hook's file is not looked
    for: switching a hook off must not need its workflow to exist."""
    if hook.kind != "workflow" or not hook.enabled:
        return hook
    name = hook.body.strip()
    where = f"{shown}: per-iteration-hooks {hook.id!r}: workflow {name!r}"
    if not _WORKFLOW_NAME.match(name) or ".." in name:
        raise RalphError(f"{where}: not a workflow name (a file name in {WORKFLOWS_DIR}/, without .yaml)")
    rel = os.path.join(WORKFLOWS_DIR, f"{name}.yaml")
    data = read_yaml_mapping(os.path.join(project_root, rel), rel)
    if data is None:
        plugin = f' (for a plugin command, write: prompt: "/{name}")' if ":" in name else ""
        raise RalphError(f"{where}: not found: {rel} does not exist or is empty{plugin}")
    kind, body = _workflow_body(data, rel)
    return replace(hook, kind=kind, body=body, workflow=name)


def _workflow_body(data: Mapping[str, Any], rel: str) -> tuple[str, str]:
    """A workflow file's `prompt` or `command`; or its `phases`' prompts, numbered, as one prompt."""
    for kind in ("prompt", "command"):
        body = data.get(kind)
        if isinstance(body, str) and body.strip():
            return kind, body
    phases = data.get("phases")
    if isinstance(phases, list) and phases:
        prompts = [phase.get("prompt") if isinstance(phase, dict) else None for phase in phases]
        if all(isinstance(prompt, str) and prompt.strip() for prompt in prompts):
            parts = [f"Phase {number}:\n{prompt}" for number, prompt in enumerate(prompts, start=1)]
            return "prompt", "\n\n".join(parts)
    raise RalphError(f"{rel}: expected a prompt, a command, or phases with a prompt each")


# ------------------------------------------------------------------ PROGRESS.yaml


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
    base = sprint or _settings(data, shown, project_root, folder_name)
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
        current_iteration=_count(stats.get("current-iteration"), f"{shown}: stats.current-iteration", 0, 0),
        max_iterations=_count(stats.get("max-iterations"), f"{shown}: stats.max-iterations", 0, 0) or None,
        idle_iterations=_count(stats.get("idle-iterations"), f"{shown}: stats.idle-iterations", 0, 0),
    )


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
        added_in_iteration=_count(item.get("added-in-iteration"), f"{where}.added-in-iteration", 0, 0),
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
        iteration=_count(item.get("iteration"), f"{where}.iteration", 0, 0),
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
            "max-iterations": progress.max_iterations,
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


def _stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def dump_progress(progress: GoalProgress) -> str:
    return _dump(progress_data(progress))


def _dump(data: dict[str, Any]) -> str:
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


def new_sprint(name: str) -> str:
    """The SPRINT.yaml `ralph init --format goal` writes."""
    return f"""\
workflow: ralph
sprint-id: {name}
goal: |
  Describe what {name} should achieve, and how to tell that it has.

  Success criteria:
  - the tests pass
  - the README says how to use it

ralph:
  idle-threshold: 3     # iterations without new steps before the agent must reflect: complete, or add steps
  min-iterations: 0     # goal-complete is refused before this many iterations

# Run after every iteration. parallel: true runs in the background; false runs before the next iteration.
# $ITERATION_TRANSCRIPT, $SPRINT_ID, $ITERATION and $PHASE_ID are set as environment variables.
# per-iteration-hooks:
#   - id: learning
#     prompt: |
#       Read $ITERATION_TRANSCRIPT and add what was learned to LEARNINGS.md.
#     parallel: true
#   - id: lint
#     command: ruff check . > lint-$ITERATION.txt
#     parallel: false
#   - id: docs
#     workflow: doc-update    # .claude/workflows/doc-update.yaml (a prompt or a command)
#     enabled: false
"""
