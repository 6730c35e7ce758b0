"""Goal mode (seed 001): the agent plans its own steps toward a goal, does them one at a time, and
says when the goal is reached; ralph keeps the steps and decides each iteration's mode.

Pure: the state is a `GoalProgress` value (PROGRESS.yaml, read and written by tasks/goal.py), and
every function here returns a new one. The modes:

- planning   — the first iteration, or no step is pending: analyse the goal, add steps;
- executing  — a step is pending: the first pending one is the iteration's focus;
- reflecting — no step is pending and none was added for `idle-threshold` iterations: complete
               the goal or add the steps still missing.

Planning iterations never open the circuit breaker on no progress alone (Settlement.planning): each one that
adds no step brings reflecting one iteration nearer, so at most `idle-threshold` of them come in a row, and the
reflecting iteration after them opens it when the no-progress streak has reached the breaker's threshold.
"""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.analysis.json_result import JsonResult
from ralphloop.core.hook_spec import HookSpec
from ralphloop.words.textsafe import one_line

PLANNING, EXECUTING, REFLECTING = "planning", "executing", "reflecting"
GOAL_TASK_ID = "goal"  # the task that stands for the goal itself (done when the goal is complete)
STEP_STATUSES = ("pending", "completed", "skipped")
HOOK_STATUSES = ("spawned", "completed", "failed")
SPRINT_STATUSES = ("in-progress", "completed", "needs-human")
DEFAULT_IDLE_THRESHOLD = 3
# hook-tasks is state, rewritten whole each iteration: the oldest records go past this many
MAX_HOOK_TASKS = 1000
# steps listed in a prompt: every pending one up to this many, and the newest finished ones
SHOWN_PENDING = 50
SHOWN_FINISHED = 20


class Step(Struct, frozen=True):
    id: str
    prompt: str
    status: str = "pending"  # pending | completed | skipped (left pending when the goal was completed)
    added_at: str = ""
    added_in_iteration: int = 0
    completed_at: str | None = None

    @property
    def pending(self) -> bool:
        return self.status == "pending"


class HookTask(Struct, frozen=True):
    iteration: int
    hook_id: str
    status: str  # spawned | completed | failed
    spawned_at: str
    completed_at: str | None = None
    exit_code: int | None = None


class GoalExit(Struct, frozen=True):
    detected_at: str | None = None
    iteration: int | None = None
    final_summary: str | None = None


class GoalProgress(Struct, frozen=True):
    """PROGRESS.yaml in seed 001's structure (plus `stats.idle-iterations`, which the modes need)."""

    sprint_id: str
    goal: str
    status: str = "in-progress"
    idle_threshold: int = DEFAULT_IDLE_THRESHOLD
    min_iterations: int = 0
    hooks: tuple[HookSpec, ...] = ()
    steps: tuple[Step, ...] = ()
    hook_tasks: tuple[HookTask, ...] = ()
    exit: GoalExit = field(default_factory=GoalExit)
    started_at: str | None = None
    current_iteration: int = 0
    max_iterations: int | None = None  # the run's limit; None: unlimited (written `unlimited`)
    idle_iterations: int = 0  # iterations in a row that added no step

    @property
    def complete(self) -> bool:
        return self.exit.detected_at is not None

    @property
    def pending(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.pending)


def mode_of(progress: GoalProgress) -> str:
    """The mode of the iteration about to start."""
    if progress.pending:
        return EXECUTING
    if progress.current_iteration > 0 and progress.idle_iterations >= progress.idle_threshold:
        return REFLECTING
    return PLANNING


def ran_in(progress: GoalProgress) -> str:
    """The mode of the iteration under way (after `begin` counted it): the mode it was prompted for."""
    return mode_of(replace(progress, current_iteration=progress.current_iteration - 1))


def focus(progress: GoalProgress) -> Step | None:
    """The step an executing iteration works on."""
    pending = progress.pending
    return pending[0] if pending else None


def phase_id(progress: GoalProgress) -> str:
    """$PHASE_ID for hooks: the step being executed, else the mode."""
    step = focus(progress)
    return step.id if step else mode_of(progress)


def begin(progress: GoalProgress, now: str, max_iterations: int | None) -> GoalProgress:
    """The stats at the start of an iteration."""
    return replace(
        progress,
        started_at=progress.started_at or now,
        current_iteration=progress.current_iteration + 1,
        max_iterations=max_iterations,
        status="in-progress" if progress.status == "needs-human" else progress.status,
    )


def min_refusal(progress: GoalProgress) -> str | None:
    """Why goal-complete cannot be accepted yet (ralph.min-iterations), or None."""
    if progress.current_iteration >= progress.min_iterations:
        return None
    return (
        f"goal-complete refused: ralph.min-iterations is {progress.min_iterations} and this was iteration "
        f"{progress.current_iteration}; keep working: verify the result, test the edge cases, and add the steps "
        f"that would make it better"
    )


class Applied(Struct, frozen=True):
    """What one JSON result changed."""

    valid: bool  # a JSON result was read: without one, the iteration is no progress
    completed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    accepted: bool = False  # the goal is complete
    refused: str | None = None  # why a goal-complete was not accepted
    needs_human: bool = False
    notes: tuple[str, ...] = ()  # problems, for the progress log and the screen
    info: tuple[str, ...] = ()  # what changed, for the progress log
    prompt_notes: tuple[str, ...] = ()  # for the next prompt

    @property
    def changed(self) -> bool:
        return bool(self.completed or self.added)


def apply_result(
    progress: GoalProgress,
    result: JsonResult | None,
    error: str | None,
    *,
    now: str,
    gate_failures: tuple[str, ...] = (),
) -> tuple[GoalProgress, Applied]:
    """The steps and the goal after the agent's JSON result (seed 001's exit detection)."""
    iteration = progress.current_iteration
    if result is None:
        why = error or "no JSON result in the agent's reply"
        idle = replace(progress, idle_iterations=progress.idle_iterations + 1)
        told = f"{why}; end your reply with the ```json result block (counted as no progress)"
        return idle, Applied(valid=False, notes=(f"{why}: counted as no progress",), prompt_notes=(told,))
    notes: list[str] = [f"JSON result problem: {problem}" for problem in result.problems]
    info: list[str] = []
    prompt_notes: list[str] = []
    claimed = result.completed_step_ids
    if claimed and gate_failures:  # a step is done when its checks pass: until then it stays pending
        why = f"steps not completed, the quality checks fail: {', '.join(gate_failures)}"
        notes.append(f"{why} ({', '.join(claimed)})")
        prompt_notes.append(f"{', '.join(claimed)}: {why}; fix what they report, then report the steps again")
        claimed = ()
    steps, completed, unknown = _complete(progress.steps, claimed, now)
    if unknown:
        notes.append(f"unknown step id(s) ignored: {', '.join(unknown)}")
    steps, added = _add(steps, result, iteration, now)
    progress = replace(
        progress, steps=steps, idle_iterations=0 if added else progress.idle_iterations + 1, status="in-progress"
    )
    if completed:
        info.append(f"steps completed: {', '.join(completed)}")
    if added:
        info.append(f"steps added: {', '.join(added)}")
    if result.summary:
        info.append(f"summary: {one_line(result.summary)}")
    refused = None
    accepted = False
    if result.status == "goal-complete":
        refused = min_refusal(progress) or (
            f"goal-complete refused: quality gates fail: {', '.join(gate_failures)}" if gate_failures else None
        )
        if refused is None:
            accepted = True
            progress = _completed_goal(progress, result, now)
            info.append("goal complete")
        else:
            notes.append(refused)
    elif result.status == "needs-human":
        progress = replace(progress, status="needs-human")
    applied = Applied(
        valid=True,
        completed=completed,
        added=added,
        accepted=accepted,
        refused=refused,
        needs_human=result.status == "needs-human",
        notes=tuple(notes),
        info=tuple(info),
        prompt_notes=(*prompt_notes, refused) if refused else tuple(prompt_notes),
    )
    return progress, applied


def _complete(
    steps: tuple[Step, ...], ids: tuple[str, ...], now: str
) -> tuple[tuple[Step, ...], tuple[str, ...], tuple[str, ...]]:
    known = {step.id for step in steps}
    wanted = set(ids)
    done = tuple(step.id for step in steps if step.pending and step.id in wanted)
    updated = tuple(replace(step, status="completed", completed_at=now) if step.id in done else step for step in steps)
    unknown = tuple(dict.fromkeys(item for item in ids if item not in known))
    return updated, done, unknown


def _add(
    steps: tuple[Step, ...], result: JsonResult, iteration: int, now: str
) -> tuple[tuple[Step, ...], tuple[str, ...]]:
    """New steps get ralph's ids (step-N, N after the highest so far). A step given with an id that
    exists is a restatement, not a new step; a prompt already pending is not added twice."""
    known = {step.id for step in steps}
    pending_prompts = {_key(step.prompt) for step in steps if step.pending}
    number = next_number(steps)
    new: list[Step] = []
    for item in result.pending_steps:
        text = item.prompt.strip()
        if not text or (item.id is not None and item.id in known) or _key(text) in pending_prompts:
            continue
        pending_prompts.add(_key(text))
        new.append(Step(f"step-{number}", text, "pending", now, iteration))
        number += 1
    return steps + tuple(new), tuple(step.id for step in new)


def _key(prompt: str) -> str:
    return " ".join(prompt.split()).lower()


def next_number(steps: tuple[Step, ...]) -> int:
    numbers = [int(step.id[5:]) for step in steps if step.id.startswith("step-") and step.id[5:].isdigit()]
    return max(numbers, default=-1) + 1


def _completed_goal(progress: GoalProgress, result: JsonResult, now: str) -> GoalProgress:
    """The goal is reached: steps still pending are kept, as skipped, and ralph-exit is filled in."""
    steps = tuple(replace(step, status="skipped") if step.pending else step for step in progress.steps)
    summary = result.goal_complete_summary or result.summary or "goal complete"
    return replace(
        progress,
        steps=steps,
        status="completed",
        exit=GoalExit(detected_at=now, iteration=progress.current_iteration, final_summary=summary),
    )


def record_hook(progress: GoalProgress, task: HookTask) -> GoalProgress:
    """hook-tasks with `task` in it: a spawned record is replaced when its run ends."""
    tasks = [old for old in progress.hook_tasks if (old.iteration, old.hook_id) != (task.iteration, task.hook_id)]
    tasks.append(task)
    return replace(progress, hook_tasks=tuple(tasks[-MAX_HOOK_TASKS:]))


# ------------------------------------------------------------------ the prompt


def mode_section(progress: GoalProgress, progress_file: str) -> str:
    """The part of the prompt that says what this iteration is for."""
    mode = mode_of(progress)
    iteration = progress.current_iteration + 1  # the section is written for the iteration about to start
    lines = [f"## Goal ({progress.sprint_id})", "", progress.goal.strip(), "", "## Steps", ""]
    lines += _step_lines(progress.steps, progress_file) or ["(none yet)"]
    lines += ["", f"## Mode: {mode}", ""]
    step = focus(progress)
    if mode == EXECUTING and step is not None:
        lines += [
            f"Work on {step.id}, and only on it:",
            "",
            step.prompt.strip(),
            "",
            f'When it is done and verified, list "{step.id}" in completedStepIds. Work you find along the way '
            'goes into pendingSteps with "id": null; do not start it now.',
        ]
    elif mode == REFLECTING:
        lines += [
            f"No step is pending and none was added for {progress.idle_iterations} iterations. Check the goal "
            "against the repository, criterion by criterion: run the tests, read the code. If everything is "
            'met and verified, report "goal-complete" with a goalCompleteSummary; otherwise add the steps '
            'still missing as pendingSteps with "id": null.',
        ]
    else:
        lines += [
            "Analyse the goal and the repository, then plan: list the work that remains as pendingSteps with "
            '"id": null, small verifiable steps in the order they should be done. Do not do the steps yet.',
        ]
    if iteration < progress.min_iterations:
        lines += [
            "",
            f"goal-complete is accepted from iteration {progress.min_iterations} on (this is iteration "
            f"{iteration}): until then, deepen and verify the work.",
        ]
    lines += ["", f"ralph keeps the steps in {progress_file}: do not edit it; report through the JSON result."]
    return "\n".join(lines)


def _step_lines(steps: tuple[Step, ...], progress_file: str) -> list[str]:
    """Every pending step, and the newest finished ones: the prompt must not grow with every step ever done."""
    finished = [index for index, step in enumerate(steps) if not step.pending]
    hidden = set(finished[:-SHOWN_FINISHED]) if len(finished) > SHOWN_FINISHED else set()
    pending = [index for index, step in enumerate(steps) if step.pending]
    hidden |= set(pending[SHOWN_PENDING:])
    lines = [_step_line(step) for index, step in enumerate(steps) if index not in hidden]
    if hidden:
        lines.append(f"({len(hidden)} more steps, older finished ones and later pending ones, are in {progress_file})")
    return lines


def _step_line(step: Step) -> str:
    mark = {"completed": "x", "skipped": "-"}.get(step.status, " ")
    return f"- [{mark}] {step.id}: {one_line(step.prompt, 200)}"
