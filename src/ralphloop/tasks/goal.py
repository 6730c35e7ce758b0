"""Goal workspaces (seed 001): SPRINT.yaml says what to reach, PROGRESS.yaml is where ralph keeps the
steps the agent plans, the hook runs and the exit.

SPRINT.yaml is the user's: `workflow: ralph`, `goal`, optional `ralph: {idle-threshold, min-iterations}`,
`per-iteration-hooks` and `sprint-id`; it is read at every iteration, so an edited goal or hook takes
effect at the next one. PROGRESS.yaml is ralph's (written atomically, like every state file); the agent
reports through its JSON result and never edits it. A folder with only a PROGRESS.yaml (`mode: ralph`)
works too: it then holds the goal and the hooks itself.

The tasks the loop sees are the steps, plus one task for the goal itself (id `goal`), done once the goal
is complete: it is the focus of planning and reflecting iterations, and it keeps the loop going when
every step so far is done. It is not a step: no screen counts it (Task.counted).
"""

from __future__ import annotations

import os
from typing import Any

from msgspec.structs import replace

from ralphloop.analysis.json_result import JsonResult
from ralphloop.core.errors import RalphError
from ralphloop.core.hook_spec import HookEnd, HookSpec
from ralphloop.core.protocols import SettleFacts, Settlement, Task, TaskView
from ralphloop.files.safe_read import TASK_CAP
from ralphloop.files.store import atomic_write_text
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.plugins.detect import present
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.goal_file import dump_data, parse_progress, progress_data, stat_key
from ralphloop.tasks.goal_refusal import sprint_refusal
from ralphloop.tasks.goal_sprint import sprint_settings
from ralphloop.tasks.goal_steps import (
    EXECUTING,
    GOAL_TASK_ID,
    PLANNING,
    GoalProgress,
    HookTask,
    apply_result,
    begin,
    focus,
    mode_of,
    mode_section,
    phase_id,
    ran_in,
    record_hook,
)
from ralphloop.tasks.problems import Problem
from ralphloop.words.redact import redact_value
from ralphloop.words.textsafe import one_line

SPRINT_NAME = "SPRINT.yaml"
PROGRESS_NAME = "PROGRESS.yaml"


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
        has_sprint = present(self.sprint_file)
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
        data = redact_value(progress_data(progress))  # step prompts and summaries are the agent's words
        atomic_write_text(self.progress_file, dump_data(data))
        key = stat_key(self.progress_file)
        self._saved = (key, data) if key else None
        self._parsed = (key, self._sprint, progress) if key else None
        self._own = (key, progress) if key else None

    def _read_sprint(self) -> GoalProgress | None:
        shown = self._shown(SPRINT_NAME)
        data = read_yaml_mapping(self.sprint_file, shown, cap=TASK_CAP)
        if data is None:
            if present(self.sprint_file):
                raise RalphError(f"{shown}: empty (write `workflow: ralph` and a `goal`)")
            return None
        refusal = sprint_refusal(data, self.sprint_file, shown)
        if refusal:
            raise RalphError(refusal)
        return sprint_settings(data, shown, self.project_root, os.path.basename(os.path.abspath(self.folder)))

    def _read_progress(self, sprint: GoalProgress | None) -> GoalProgress | None:
        shown = self._shown(PROGRESS_NAME)
        key = stat_key(self.progress_file)
        if key is not None and self._parsed is not None and self._parsed[:2] == (key, sprint):
            return self._parsed[2]
        if key is not None and self._saved is not None and self._saved[0] == key:
            data: dict[str, Any] | None = self._saved[1]
        else:
            data = read_yaml_mapping(self.progress_file, shown, cap=TASK_CAP, follow=False)  # ralph's own
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
            counted=False,
        )
        step = focus(progress)
        if progress.complete:
            current = None
        elif mode_of(progress) == EXECUTING and step is not None:
            current = next(task for task in steps if task.id == step.id)
        else:
            current = replace(goal, title=f"{mode_of(progress)}: {goal.title}")
        return TaskView(tasks=(*steps, goal), next_task=current, planned=True)

    def describe(self, task: Task) -> str:
        # read again (cheap when nothing changed): a hook may have edited SPRINT.yaml since the last load
        return mode_section(self.progress(), self._shown(PROGRESS_NAME))

    def restore_own(self) -> bool:
        """PROGRESS.yaml as ralph last wrote it, when anything else changed it since (the agent must report
        through its JSON result: an edited `ralph-exit` must not complete the goal)."""
        if self._own is None or stat_key(self.progress_file) == self._own[0]:
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
            planning = ran_in(progress) == PLANNING
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
            planning=planning,
            error=error or facts.broken,
        )

    def hook_scope(self, task_id: str) -> tuple[str, str] | None:
        progress = self.progress()
        return progress.sprint_id, phase_id(progress)

    def iteration_hooks(self) -> tuple[HookSpec, ...]:
        return self.progress().hooks

    def record_hook(self, number: int, hook_id: str, ended: HookEnd | None, now: str) -> str | None:
        """hook-tasks in PROGRESS.yaml: spawned when a hook starts, completed or failed when it ends."""
        try:
            progress = self.saved_progress()
            spawned = next(
                (t.spawned_at for t in progress.hook_tasks if (t.iteration, t.hook_id) == (number, hook_id)), now
            )
            if ended is None:
                task = HookTask(number, hook_id, "spawned", now)
            else:
                outcome = "completed" if ended.ok else "failed"
                task = HookTask(number, hook_id, outcome, spawned, now, ended.exit_code)
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


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> GoalSource:
    """The format registry's opener (plugins/formats.py)."""
    return GoalSource(paths.dir, display_path(paths.dir, os.getcwd()), paths.project_root)


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format goal` writes."""
    from ralphloop.tasks.goal_sprint import new_sprint
    from ralphloop.templates.prompt import default_template

    return {"SPRINT.yaml": new_sprint(name), "prompt.md": default_template("goal")}
