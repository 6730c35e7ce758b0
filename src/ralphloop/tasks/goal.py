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

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ralphloop.config import read_yaml_mapping
from ralphloop.engine.goal import (
    DEFAULT_IDLE_THRESHOLD,
    EXECUTING,
    GOAL_TASK_ID,
    HOOK_STATUSES,
    SPRINT_STATUSES,
    STEP_STATUSES,
    GoalExit,
    GoalProgress,
    HookSpec,
    HookTask,
    Step,
    focus,
    mode_of,
    mode_section,
)
from ralphloop.errors import RalphError
from ralphloop.protocols import Task, TaskView
from ralphloop.state.store import atomic_write_text
from ralphloop.textsafe import one_line

SPRINT_NAME = "SPRINT.yaml"
PROGRESS_NAME = "PROGRESS.yaml"
WORKFLOWS_DIR = os.path.join(".claude", "workflows")
# `.claude/workflows/ralph.yaml` defines hooks a SPRINT.yaml can switch on by id (seed 001).
RALPH_WORKFLOW = "ralph"
_WORKFLOW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")


class GoalSource:
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
        self._progress: GoalProgress | None = None

    def _shown(self, name: str) -> str:
        return f"{self.display}/{name}"

    # -------------------------------------------------------------- the store

    def progress(self) -> GoalProgress:
        """PROGRESS.yaml with SPRINT.yaml's goal, settings and hooks over it (nothing is written)."""
        saved = self._read_progress()
        sprint = self._read_sprint()
        if sprint is None:
            if saved is None:
                raise RalphError(f"{self.display}: neither {SPRINT_NAME} nor {PROGRESS_NAME} found")
            return saved
        if saved is None:
            return sprint
        return replace(
            saved,
            sprint_id=sprint.sprint_id,
            goal=sprint.goal,
            idle_threshold=sprint.idle_threshold,
            min_iterations=sprint.min_iterations,
            hooks=sprint.hooks,
        )

    def save(self, progress: GoalProgress) -> None:
        atomic_write_text(self.progress_file, dump_progress(progress))

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

    def _read_progress(self) -> GoalProgress | None:
        shown = self._shown(PROGRESS_NAME)
        data = read_yaml_mapping(self.progress_file, shown)
        if data is None:
            return None
        folder_name = os.path.basename(os.path.abspath(self.folder))
        # with a SPRINT.yaml, its hooks replace PROGRESS.yaml's copy: that copy is not resolved again
        return parse_progress(data, shown, self.project_root, folder_name, hooks=not os.path.isfile(self.sprint_file))

    # -------------------------------------------------------------- the task source

    def load(self) -> TaskView:
        progress = self._progress = self.progress()
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
        progress = self._progress or self.progress()
        return mode_section(progress, self._shown(PROGRESS_NAME))

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []  # never called: marks_done is False


def goal_problems(folder: str, display: str, project_root: str) -> list[str]:
    """What is wrong with a goal workspace, for `ralph validate` ([] when it loads)."""
    try:
        GoalSource(folder, display, project_root).load()
    except RalphError as exc:
        return [str(exc)]
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
        if not isinstance(hook_id, str) or not hook_id.strip():
            raise RalphError(f"{where}: id: expected a name")
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
    data: Mapping[str, Any], shown: str, project_root: str, folder_name: str, *, hooks: bool = True
) -> GoalProgress:
    """PROGRESS.yaml, checked: a damaged file is named, never half-read."""
    if data.get("mode", "ralph") != "ralph":
        raise RalphError(f"{shown}: mode: expected ralph")
    status = data.get("status", "in-progress")
    if status not in SPRINT_STATUSES:
        raise RalphError(f"{shown}: status: expected one of {', '.join(SPRINT_STATUSES)}")
    settings = {key: value for key, value in data.items() if hooks or key != "per-iteration-hooks"}
    base = _settings(settings, shown, project_root, folder_name)
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


def dump_progress(progress: GoalProgress) -> str:
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class _Dumper(base):  # type: ignore[misc]
        """Multi-line text (the goal, long prompts) as `|` blocks, as a person would write it."""

    def _text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value and not any(ch in value for ch in "\r\t") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _text)
    text: str = yaml.dump(
        progress_data(progress),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return text


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
