"""Review of goal mode's pure parts: PROGRESS.yaml as ralph writes it must read back with ralph's own reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.goal_file import dump_progress
from ralphloop.tasks.goal_steps import GoalProgress, Step

NOW = "2026-11-21T10:00:00Z"


def test_progress_yaml_with_a_lone_surrogate_reads_back_with_ralphs_reader(tmp_path: Path) -> None:
    step = Step("step-0", "fix \ud800 this", "pending", NOW, 1)  # json.loads('"fix \\ud800 this"')
    progress = GoalProgress(sprint_id="s1", goal="Build it.\n", steps=(step,), current_iteration=1)
    path = tmp_path / "PROGRESS.yaml"
    path.write_text(dump_progress(progress), encoding="utf-8")

    try:
        data = read_yaml_mapping(str(path), "PROGRESS.yaml")
    except RalphError as exc:  # what every later `ralph run` then stops at
        pytest.fail(f"ralph cannot read the PROGRESS.yaml it wrote: {exc}")
    assert data is not None
    # whatever ralph keeps of the text, the file must load and name the step
    assert data["dynamic-steps"][0]["id"] == "step-0"


def test_a_saved_progress_with_a_lone_surrogate_is_read_by_the_next_run(tmp_path: Path) -> None:
    folder = tmp_path / "sprint"
    folder.mkdir()
    (folder / "SPRINT.yaml").write_text("workflow: ralph\ngoal: Build it.\n")
    first = GoalSource(str(folder), "sprint", str(tmp_path))
    progress = first.progress()
    first.save(
        GoalProgress(
            sprint_id=progress.sprint_id,
            goal=progress.goal,
            steps=(Step("step-0", "half an emoji \ud83d", "pending", NOW, 1),),
            current_iteration=1,
        )
    )

    again = GoalSource(str(folder), "sprint", str(tmp_path))  # a new `ralph run`: no cache
    try:
        steps = again.progress().steps
    except RalphError as exc:
        pytest.fail(f"the next run stops: {exc}")
    assert [step.id for step in steps] == ["step-0"]
