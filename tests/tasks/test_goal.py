"""Goal mode's pure parts (engine/goal.py) and its files (tasks/goal.py): modes, results, PROGRESS.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from ralphloop.analysis.json_result import JsonResult, PendingStep
from ralphloop.core.errors import RalphError
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.goal_file import dump_progress, parse_progress, progress_data
from ralphloop.tasks.goal_steps import (
    EXECUTING,
    PLANNING,
    REFLECTING,
    GoalProgress,
    HookTask,
    Step,
    apply_result,
    begin,
    mode_of,
    mode_section,
    phase_id,
    record_hook,
)

NOW = "2026-11-21T10:00:00Z"


def goal(**changes: object) -> GoalProgress:
    return replace(GoalProgress(sprint_id="s1", goal="Build it.\n", current_iteration=1), **changes)


def pending(*ids: str) -> tuple[Step, ...]:
    return tuple(Step(step_id, f"do {step_id}", "pending", NOW, 1) for step_id in ids)


# ------------------------------------------------------------------ modes


def test_the_first_iteration_plans() -> None:
    assert mode_of(goal(current_iteration=0)) == PLANNING


def test_a_pending_step_is_executed_first_pending_first() -> None:
    progress = goal(steps=pending("step-0", "step-1"))
    assert mode_of(progress) == EXECUTING
    assert phase_id(progress) == "step-0"


def test_no_pending_step_plans_until_idle_threshold_then_reflects() -> None:
    done = (Step("step-0", "x", "completed", NOW, 1, NOW),)
    assert mode_of(goal(steps=done, idle_iterations=2, idle_threshold=3)) == PLANNING
    assert mode_of(goal(steps=done, idle_iterations=3, idle_threshold=3)) == REFLECTING
    assert phase_id(goal(steps=done, idle_iterations=3, idle_threshold=3)) == REFLECTING


def test_begin_counts_the_iteration_and_keeps_the_start() -> None:
    first = begin(goal(current_iteration=0), NOW, 10)
    second = begin(first, "2026-11-21T11:00:00Z", None)
    assert (first.current_iteration, first.started_at, first.max_iterations) == (1, NOW, 10)
    assert (second.current_iteration, second.started_at, second.max_iterations) == (2, NOW, None)


# ------------------------------------------------------------------ results


def test_new_steps_get_ralphs_ids_after_the_highest() -> None:
    progress = goal(steps=(Step("step-4", "old", "completed", NOW, 1, NOW),))
    result = JsonResult("continue", pending_steps=(PendingStep(None, "a"), PendingStep(None, "b")))
    after, applied = apply_result(progress, result, None, now=NOW)
    assert [step.id for step in after.steps] == ["step-4", "step-5", "step-6"]
    assert applied.added == ("step-5", "step-6") and applied.valid and applied.changed
    assert after.steps[1].added_in_iteration == 1 and after.idle_iterations == 0


def test_restated_and_repeated_steps_are_not_added_twice() -> None:
    progress = goal(steps=pending("step-0"))
    result = JsonResult(
        "continue",
        pending_steps=(PendingStep("step-0", "do step-0"), PendingStep(None, "DO  step-0"), PendingStep(None, "")),
    )
    after, applied = apply_result(progress, result, None, now=NOW)
    assert after.steps == progress.steps and applied.added == ()
    assert after.idle_iterations == progress.idle_iterations + 1


def test_completed_ids_complete_pending_steps_and_unknown_ids_are_named() -> None:
    progress = goal(steps=pending("step-0", "step-1"))
    result = JsonResult("continue", completed_step_ids=("step-1", "step-9"))
    after, applied = apply_result(progress, result, None, now=NOW)
    assert [step.status for step in after.steps] == ["pending", "completed"]
    assert after.steps[1].completed_at == NOW
    assert applied.completed == ("step-1",)
    assert any("step-9" in note for note in applied.notes)


def test_failing_gates_keep_the_claimed_steps_pending() -> None:
    progress = goal(steps=pending("step-0"))
    result = JsonResult("continue", completed_step_ids=("step-0",))
    after, applied = apply_result(progress, result, None, now=NOW, gate_failures=("tests",))
    assert after.steps[0].pending and applied.completed == ()
    assert any("tests" in note for note in applied.prompt_notes)


def test_goal_complete_is_refused_before_min_iterations_and_accepted_from_it() -> None:
    result = JsonResult("goal-complete", summary="s", goal_complete_summary="all done")
    early, refused = apply_result(goal(min_iterations=3, current_iteration=2), result, None, now=NOW)
    assert not early.complete and refused.refused and "min-iterations is 3" in refused.refused
    assert refused.prompt_notes == (refused.refused,)
    on_time, accepted = apply_result(
        goal(min_iterations=3, current_iteration=3, steps=pending("step-0")), result, None, now=NOW
    )
    assert accepted.accepted and on_time.complete and on_time.status == "completed"
    assert (on_time.exit.iteration, on_time.exit.final_summary) == (3, "all done")
    assert on_time.steps[0].status == "skipped"  # left pending when the goal was reached


def test_goal_complete_is_refused_while_a_gate_fails() -> None:
    result = JsonResult("goal-complete")
    after, applied = apply_result(goal(), result, None, now=NOW, gate_failures=("lint",))
    assert not after.complete and applied.refused and "lint" in applied.refused


def test_needs_human_sets_the_status() -> None:
    result = JsonResult("needs-human", human_reason="no key", human_details="add it")
    after, applied = apply_result(goal(), result, None, now=NOW)
    assert after.status == "needs-human" and applied.needs_human
    assert begin(after, NOW, None).status == "in-progress"  # a new run goes on


@pytest.mark.parametrize("error", [None, "malformed JSON result at line 1, column 2: Expecting value"])
def test_no_result_is_no_progress_and_asks_for_the_block(error: str | None) -> None:
    after, applied = apply_result(goal(steps=pending("step-0")), None, error, now=NOW)
    assert not applied.valid and not applied.changed
    assert after.steps == pending("step-0") and after.idle_iterations == 1
    assert "json" in applied.prompt_notes[0].lower()
    if error:
        assert error in applied.notes[0]


def test_a_hook_record_replaces_its_spawned_one() -> None:
    progress = record_hook(goal(), HookTask(2, "learn", "spawned", NOW))
    progress = record_hook(progress, HookTask(2, "docs", "spawned", NOW))
    progress = record_hook(progress, HookTask(2, "learn", "completed", NOW, NOW, 0))
    assert [(task.hook_id, task.status) for task in progress.hook_tasks] == [
        ("docs", "spawned"),
        ("learn", "completed"),
    ]


def test_the_mode_section_tells_the_focus_and_the_minimum() -> None:
    text = mode_section(goal(steps=pending("step-0"), min_iterations=5), "PROGRESS.yaml")
    assert "## Mode: executing" in text and "Work on step-0" in text and "- [ ] step-0: do step-0" in text
    assert "accepted from iteration 5 on (this is iteration 2)" in text
    planning = mode_section(goal(current_iteration=0), "PROGRESS.yaml")
    assert "(none yet)" in planning and "## Mode: planning" in planning


# ------------------------------------------------------------------ files


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def test_progress_yaml_round_trips(tmp_path: Path) -> None:
    import yaml

    progress = goal(
        steps=(*pending("step-0"), Step("step-1", "line one\nline two", "completed", NOW, 1, NOW)),
        hook_tasks=(HookTask(1, "learn", "failed", NOW, NOW, 3),),
        started_at=NOW,
    )
    text = dump_progress(progress)
    assert "goal: |" in text  # multi-line text as a block, as a person writes it
    again = parse_progress(yaml.safe_load(text), "PROGRESS.yaml", str(tmp_path), "x")
    assert again == progress
    assert list(progress_data(progress))[:4] == ["sprint-id", "status", "mode", "goal"]


def test_sprint_yaml_settings_and_hooks(tmp_path: Path) -> None:
    write(
        tmp_path / "s",
        "SPRINT.yaml",
        "workflow: ralph\ngoal: Ship it\nralph: {idle-threshold: 2, min-iterations: 4}\n"
        "per-iteration-hooks:\n  - {id: a, command: 'echo hi', parallel: false}\n"
        "  - {id: b, prompt: 'look', enabled: false}\n",
    )
    progress = GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).progress()
    assert (progress.sprint_id, progress.idle_threshold, progress.min_iterations) == ("s", 2, 4)
    assert [(h.id, h.kind, h.parallel, h.enabled) for h in progress.hooks] == [
        ("a", "command", False, True),
        ("b", "prompt", True, False),
    ]


def test_workflow_hooks_resolve_from_claude_workflows(tmp_path: Path) -> None:
    write(tmp_path / ".claude" / "workflows", "doc.yaml", "phases:\n  - {id: one, prompt: Read}\n  - {prompt: Write}\n")
    write(
        tmp_path / ".claude" / "workflows",
        "ralph.yaml",
        "per-iteration-hooks:\n  - {id: learn, command: 'true'}\n  - {id: docs, workflow: doc}\n",
    )
    write(tmp_path / "s", "SPRINT.yaml", "workflow: ralph\ngoal: g\nper-iteration-hooks:\n  docs: {enabled: true}\n")
    hooks = GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).progress().hooks
    assert [(h.id, h.enabled) for h in hooks] == [("learn", False), ("docs", True)]
    assert hooks[1].kind == "prompt" and hooks[1].body == "Phase 1:\nRead\n\nPhase 2:\nWrite"
    assert hooks[1].workflow == "doc"


@pytest.mark.parametrize(
    ("sprint", "message"),
    [
        ("workflow: standard\ngoal: g\n", "workflow: expected ralph"),
        ("workflow: ralph\n", "goal: expected the goal as text"),
        ("workflow: ralph\ngoal: g\nralph: {min-iterations: -1}\n", "ralph.min-iterations"),
        ("workflow: ralph\ngoal: g\nper-iteration-hooks: [{id: a, prompt: x, command: y}]\n", "exactly one"),
        ("workflow: ralph\ngoal: g\nper-iteration-hooks: [{id: a, workflow: nope}]\n", "workflows/nope.yaml"),
        ("workflow: ralph\ngoal: g\nper-iteration-hooks: [{id: a, workflow: ../x}]\n", "not a workflow name"),
        ("workflow: ralph\ngoal: g\nper-iteration-hooks: {learn: {enabled: true}}\n", "no hook 'learn'"),
        ("workflow: ralph\ngoal: [g\n", "invalid YAML"),
    ],
)
def test_bad_sprint_yaml_is_named(tmp_path: Path, sprint: str, message: str) -> None:
    write(tmp_path / "s", "SPRINT.yaml", sprint)
    with pytest.raises(RalphError) as caught:
        GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).load()
    assert str(caught.value).startswith("s/SPRINT.yaml") and message in str(caught.value)


def test_a_disabled_workflow_hook_needs_no_file(tmp_path: Path) -> None:
    write(
        tmp_path / "s",
        "SPRINT.yaml",
        "workflow: ralph\ngoal: g\nper-iteration-hooks: [{id: a, workflow: nope, enabled: false}]\n",
    )
    assert GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).progress().hooks[0].enabled is False


def test_the_view_holds_the_steps_and_the_goal(tmp_path: Path) -> None:
    write(tmp_path / "s", "SPRINT.yaml", "workflow: ralph\ngoal: Ship it\n")
    source = GoalSource(str(tmp_path / "s"), "s", str(tmp_path))
    view = source.load()
    assert [task.id for task in view.tasks] == ["goal"] and view.next_task is not None
    assert view.next_task.title == "planning: Ship it" and not view.all_done
    source.save(goal(goal="Ship it", steps=pending("step-0")))
    view = source.load()
    assert view.next_task is not None and view.next_task.id == "step-0"
    assert "## Mode: executing" in source.describe(view.next_task)
    source.save(replace(goal(goal="Ship it"), exit=replace(goal().exit, detected_at=NOW)))
    done = source.load()
    assert done.all_done and done.next_task is None


def test_a_damaged_progress_yaml_is_named(tmp_path: Path) -> None:
    write(tmp_path / "s", "SPRINT.yaml", "workflow: ralph\ngoal: g\n")
    write(tmp_path / "s", "PROGRESS.yaml", "mode: ralph\ndynamic-steps: {a: 1}\n")
    with pytest.raises(RalphError, match=r"^s/PROGRESS.yaml: dynamic-steps: expected a list"):
        GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).load()


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    [
        "",
        "yes",
        "null",
        "2026-11-21T10:00:00Z",
        "12",
        "a: b",
        "- x",
        "line\n",
        "two\nlines",
        " lead\nx",
        "x\n\n",
        "#c",
        "n\x85l\u2028x",
        "tab\there",
        "bom\ufeff",
        "cr\r\nlf",
    ]
)


@settings(max_examples=300, deadline=None)
@given(goal_text=texts, prompt=texts, sprint_id=texts.filter(lambda text: text.strip() != ""), summary=texts)
def test_progress_yaml_reads_back_as_written(goal_text: str, prompt: str, sprint_id: str, summary: str) -> None:
    """ralph writes PROGRESS.yaml itself (for speed): whatever text the agent sent, PyYAML reads back the same."""
    import yaml

    progress = GoalProgress(
        sprint_id=sprint_id,
        goal=goal_text,
        steps=(Step("step-0", prompt, "pending", NOW, 1),),
        hook_tasks=(HookTask(1, prompt or "h", "completed", NOW, None, None),),
        exit=replace(GoalProgress("s", "g").exit, final_summary=summary),
    )
    assert yaml.safe_load(dump_progress(progress)) == progress_data(progress)


def test_the_prompt_lists_pending_steps_and_only_the_newest_finished() -> None:
    done = tuple(Step(f"step-{n}", f"old {n}", "completed", NOW, 1, NOW) for n in range(100))
    text = mode_section(goal(steps=(*done, *pending("step-100", "step-101"))), "PROGRESS.yaml")
    assert "step-99: old 99" in text and "step-0: old 0" not in text
    assert "- [ ] step-100" in text and "- [ ] step-101" in text
    assert "(80 more steps" in text


def test_half_a_character_is_written_as_a_replacement_character() -> None:
    """JSON can carry a lone surrogate; no YAML reader accepts one, so PROGRESS.yaml holds U+FFFD instead."""
    import yaml

    text = dump_progress(goal(goal="emoji \ud83d half"))
    assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["goal"] == "emoji \ufffd half"


@pytest.mark.parametrize(
    ("sprint", "message"),
    [
        (
            "name: x\ngoal: Ship it.\n",
            "s/SPRINT.yaml: no `workflow:` key: ralph runs a SPRINT.yaml only with `workflow: ralph`: write that line",
        ),
        (
            "name: x\nworkflow:\ngoal: Ship it.\n",
            "s/SPRINT.yaml:2: `workflow:` is empty: ralph runs a SPRINT.yaml only with `workflow: ralph`",
        ),
        ("workflow: [ralph]\ngoal: g\n", "s/SPRINT.yaml:1: workflow: expected ralph, not a list"),
        (
            "workflow: ralph\n\ngoals:\n  - one\n  - two\n",
            "s/SPRINT.yaml: goal: expected the goal as text (this one has `goals:` at line 3, a list, where ralph "
            "reads `goal:`); write it as `goal: |` and the text below it",
        ),
        ("workflow: ralph\ngoal:\n  - one\n", "s/SPRINT.yaml:2: goal: expected the goal as text (this one is a list)"),
        ("'workflow': standard\nsteps: [{prompt: a}, {prompt: b}]\n", "(the 2 steps under `steps:` at line 2 are"),
    ],
)
def test_a_sprint_ralph_does_not_run_is_told_by_its_near_miss(tmp_path: Path, sprint: str, message: str) -> None:
    write(tmp_path / "s", "SPRINT.yaml", sprint)
    with pytest.raises(RalphError) as caught:
        GoalSource(str(tmp_path / "s"), "s", str(tmp_path)).load()
    assert message in str(caught.value)
