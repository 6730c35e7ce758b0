"""Goal mode's workflow hooks at the CLI's edge (issue 21: a user's commands never silently mean something else): a
workflow hook ralph cannot run is refused in one error line that says what a local workflow may be, before anything
is written, with the real `ralph run` in a real git repository.

What the loop does with a goal that stalls, a plugin workflow hook, stats.max-iterations and the step counts on every
screen is tests/engine/test_goal_switching.py's, in-process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RalphRunner
from tests.integration.helpers import assert_one_line_error, snapshot
from tests.integration.test_goal_mode import run_goal, sprint_yaml, write_sprint

WORKFLOW_REFUSALS: dict[str, tuple[dict[str, str], str, tuple[str, ...]]] = {
    "no file": ({}, "doc-update", (".claude/workflows/doc-update.yaml", "a prompt, a command, or phases", "plugin")),
    "phases without prompts": (
        {"doc-update.yaml": "phases:\n  - id: write\n    workflow: other\n"},
        "doc-update",
        (".claude/workflows/doc-update.yaml", "`prompt`, a `command`, or `phases` with a `prompt` each"),
    ),
    "a plugin name that is also a file": (
        {"m42-signs:learning-extraction.yaml": "prompt: Summarise it.\n"},
        '"m42-signs:learning-extraction"',
        ("learning", ".claude/workflows/m42-signs:learning-extraction.yaml exists", "rename the file"),
    ),
}


@pytest.mark.parametrize("case", list(WORKFLOW_REFUSALS))
def test_a_workflow_hook_ralph_cannot_run_is_refused_saying_what_it_runs(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, case: str
) -> None:
    files, name, needles = WORKFLOW_REFUSALS[case]
    for file_name, text in files.items():
        (project / ".claude" / "workflows").mkdir(parents=True, exist_ok=True)
        (project / ".claude" / "workflows" / file_name).write_text(text)
    write_sprint(project, ralph_env, sprint_yaml(hooks=f"- id: learning\n  workflow: {name}\n"))
    log = tmp_path / "goal.log"
    before = snapshot(project)

    done = run_goal(ralph, GOAL_LOG=str(log))

    assert_one_line_error(done, *needles)
    assert not log.exists()  # the agent never ran
    assert snapshot(project) == before
