"""SPRINT.yaml (seed 001): the user's goal, `ralph:` settings and per-iteration hooks, read and checked; and
the commented SPRINT.yaml `ralph init --format goal` writes. Also the `workflow:` hooks it names in
.claude/workflows/."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from ralphloop.core.errors import RalphError
from ralphloop.core.hook_spec import HookSpec
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.tasks.goal_steps import DEFAULT_IDLE_THRESHOLD, GoalProgress

WORKFLOWS_DIR = os.path.join(".claude", "workflows")
# `.claude/workflows/ralph.yaml` defines hooks a SPRINT.yaml can switch on by id (seed 001).
RALPH_WORKFLOW = "ralph"
MAX_HOOK_ID = 100  # it names the hook's log files
_WORKFLOW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]*$")
# seed 001's external plugin workflow, `plugin:command` (Claude Code's plugin command namespace)
_PLUGIN_COMMAND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]*(?::[A-Za-z0-9][A-Za-z0-9._@-]*)+$")
# what a plugin workflow hook asks the agent: its slash command, on the iteration's transcript (seed 001's
# `/m42-signs:extract $ITERATION_TRANSCRIPT`); the variable is filled in when the hook runs
PLUGIN_PROMPT = "/{name} $ITERATION_TRANSCRIPT"
LOCAL_WORKFLOW = "a file in .claude/workflows/ holding a prompt, a command, or phases with a prompt each"


def sprint_settings(data: Mapping[str, Any], shown: str, project_root: str, folder_name: str) -> GoalProgress:
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
        idle_threshold=count_field(
            ralph.get("idle-threshold"), f"{shown}: ralph.idle-threshold", 1, DEFAULT_IDLE_THRESHOLD
        ),
        min_iterations=count_field(ralph.get("min-iterations"), f"{shown}: ralph.min-iterations", 0, 0),
        hooks=_hooks(data.get("per-iteration-hooks"), shown, project_root),
    )


def count_field(value: Any, where: str, least: int, default: int) -> int:
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
    """A `workflow:` hook as what it runs (seed 001's two reference types): `plugin:command` is that plugin's
    slash command, run by the agent on the iteration's transcript; any other name is a local workflow, the
    prompt or command its file in .claude/workflows/ holds. A disabled hook's file is not looked for:
    switching a hook off must not need its workflow to exist."""
    if hook.kind != "workflow" or not hook.enabled:
        return hook
    name = hook.body.strip()
    where = f"{shown}: per-iteration-hooks {hook.id!r}: workflow {name!r}"
    if _PLUGIN_COMMAND.match(name):
        _no_local_file(name, where, project_root)
        return replace(hook, kind="prompt", body=PLUGIN_PROMPT.format(name=name), workflow=name)
    if not _WORKFLOW_NAME.match(name) or ".." in name:
        raise RalphError(f"{where}: not a workflow name: write plugin:command, or the name of {LOCAL_WORKFLOW}")
    rel = os.path.join(WORKFLOWS_DIR, f"{name}.yaml")
    data = read_yaml_mapping(os.path.join(project_root, rel), rel)
    if data is None:
        raise RalphError(
            f"{where}: not found: {rel} does not exist or is empty (a local workflow is {LOCAL_WORKFLOW}; "
            "a plugin's command is written plugin:command)"
        )
    kind, body = _workflow_body(data, rel)
    return replace(hook, kind=kind, body=body, workflow=name)


def _no_local_file(name: str, where: str, project_root: str) -> None:
    """A plugin command must not hide a local file of its name (ralph once read `workflow: a:b` from
    .claude/workflows/a:b.yaml): which one was meant is the user's to say."""
    rel = os.path.join(WORKFLOWS_DIR, f"{name}.yaml")
    if os.path.lexists(os.path.join(project_root, rel)):
        raise RalphError(
            f"{where}: plugin:command runs the plugin's slash command, yet {rel} exists: rename the file "
            "(a local workflow's name has no colon)"
        )


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
    raise RalphError(
        f"{rel}: a per-iteration hook's workflow runs a `prompt`, a `command`, or `phases` with a `prompt` each "
        "(phases that name other workflows, or steps without a prompt, are not run)"
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
#     workflow: doc-update    # .claude/workflows/doc-update.yaml (a prompt, a command, or phases with prompts)
#     enabled: false
#   - id: signs
#     workflow: m42-signs:learning-extraction   # a plugin's command, run by the agent on the transcript
"""
