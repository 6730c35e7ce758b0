"""Goal mode (seed 001) at the CLI's edge: `ralph run FOLDER/` on a folder with a SPRINT.yaml, in a real git repo.

What the loop does with a goal (planning, executing, reflecting, goal-complete refused, needs-human, an unreadable
result, the per-iteration hooks and PROGRESS.yaml) is tests/engine/test_goal_mode.py's, in-process. Here: bad input
is one error line that changes nothing (and `ralph validate` names it too), and `ralph init --format goal` makes a
workspace that validate and a dry run accept. The helpers below serve the other goal tests of this folder
(tests/agents/goal_agent.py is their agent).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import (
    assert_one_line_error,
    git,
    snapshot,
)

GOAL_AGENT = agent_cmd("goal_agent.py")
SPRINT_DIR = "sprints/auth"
GOAL = """\
Users can log in.

Success criteria:
- a.txt and b.txt exist
"""


def write_sprint(project: Path, env: dict[str, str], body: str, name: str = SPRINT_DIR) -> Path:
    """sprints/auth/SPRINT.yaml with `body` (dedented), committed so the workspace starts clean."""
    folder = project / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SPRINT.yaml").write_text(textwrap.dedent(body).lstrip())
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "sprint")
    return folder


def sprint_yaml(*, ralph: str = "", hooks: str = "", extra: str = "") -> str:
    """A SPRINT.yaml: the goal above, and the given `ralph:` settings, hooks and other keys (YAML text)."""
    text = "workflow: ralph\n" + extra + "goal: |\n" + textwrap.indent(GOAL, "  ")
    if ralph:
        text += "ralph:\n" + textwrap.indent(textwrap.dedent(ralph), "  ")
    if hooks:
        text += "per-iteration-hooks:\n" + textwrap.indent(textwrap.dedent(hooks), "  ")
    return text


def run_goal(ralph: RalphRunner, *args: str, cmd: str = GOAL_AGENT, **env: str) -> subprocess.CompletedProcess[str]:
    """`ralph run sprints/auth/ ARGS --agent-cmd CMD`, with `env` added to the environment."""
    return ralph("run", f"{SPRINT_DIR}/", *args, "--agent-cmd", cmd, env=env)


def progress_yaml(folder: Path) -> dict[str, Any]:
    data = yaml.safe_load((folder / "PROGRESS.yaml").read_text())
    assert isinstance(data, dict), data
    return data


# ------------------------------------------------------------------ bad input

BAD_INPUTS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "malformed SPRINT.yaml": (
        {"SPRINT.yaml": "workflow: ralph\ngoal: [unclosed\n"},
        ("sprints/auth/SPRINT.yaml", "invalid YAML"),
    ),
    "another workflow": (
        {"SPRINT.yaml": "workflow: standard\ngoal: Users can log in.\n"},
        ("sprints/auth/SPRINT.yaml", "workflow: expected ralph"),
    ),
    "no goal": (
        {"SPRINT.yaml": "workflow: ralph\nsprint-id: auth\n"},
        ("sprints/auth/SPRINT.yaml", "goal"),
    ),
    "missing workflow file": (
        {"SPRINT.yaml": sprint_yaml(hooks="- id: docs\n  workflow: doc-update\n")},
        ("sprints/auth/SPRINT.yaml", "docs", ".claude/workflows/doc-update.yaml"),
    ),
    "prompt and command": (
        {"SPRINT.yaml": sprint_yaml(hooks="- id: both\n  prompt: Summarise it.\n  command: echo hi\n")},
        ("sprints/auth/SPRINT.yaml", "both", "exactly one of prompt, command or workflow"),
    ),
    "unknown hook in the mapping form": (
        {"SPRINT.yaml": sprint_yaml(hooks="learning: {enabled: true}\n")},
        ("sprints/auth/SPRINT.yaml", "learning", ".claude/workflows/ralph.yaml"),
    ),
    "damaged PROGRESS.yaml": (
        {
            "SPRINT.yaml": sprint_yaml(),
            "PROGRESS.yaml": "sprint-id: auth\nmode: ralph\ngoal: x\ndynamic-steps: not a list\n",
        },
        ("sprints/auth/PROGRESS.yaml", "dynamic-steps"),
    ),
    "a damaged step in PROGRESS.yaml": (
        {
            "SPRINT.yaml": sprint_yaml(),
            "PROGRESS.yaml": "sprint-id: auth\nmode: ralph\ngoal: x\ndynamic-steps:\n- id: step-0\n  status: done\n",
        },
        ("sprints/auth/PROGRESS.yaml", "dynamic-steps[0]"),
    ),
}


# ralph validate is asked too for these (it shares the checks; each call costs a process start)
VALIDATED = ("malformed SPRINT.yaml", "missing workflow file", "damaged PROGRESS.yaml")


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_a_one_line_error_that_changes_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, case: str
) -> None:
    files, needles = BAD_INPUTS[case]
    folder = project / SPRINT_DIR
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "sprint")
    log = tmp_path / "goal.log"
    before = snapshot(project)

    done = run_goal(ralph, GOAL_LOG=str(log))

    assert_one_line_error(done, *needles)
    assert not log.exists()  # the agent never ran
    assert snapshot(project) == before
    if case in VALIDATED:
        # `ralph validate` names the same problem, and writes nothing either
        checked = ralph("validate", "-f", f"{SPRINT_DIR}/")
        assert checked.returncode == 1, checked.stdout + checked.stderr
        assert "Traceback" not in checked.stdout + checked.stderr
        assert needles[0] in checked.stdout + checked.stderr
        assert needles[-1] in checked.stdout + checked.stderr
        assert snapshot(project) == before


def test_another_workflow_is_reported_as_a_problem_of_sprint_yaml(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_sprint(project, ralph_env, "workflow: standard\ngoal: Users can log in.\n")
    before = snapshot(project)

    done = run_goal(ralph)

    line = assert_one_line_error(done, "sprints/auth/SPRINT.yaml", "workflow", "standard")
    assert "TODO.md" not in line
    assert snapshot(project) == before


# ------------------------------------------------------------------ ralph init --format goal


def test_init_format_goal_makes_a_workspace_validate_and_dry_run_accept(project: Path, ralph: RalphRunner) -> None:
    made = ralph("init", "auth", "--format", "goal")
    assert made.returncode == 0, made.stdout + made.stderr
    folder = project / ".ralph" / "auth"
    sprint = yaml.safe_load((folder / "SPRINT.yaml").read_text())
    assert sprint["workflow"] == "ralph"
    assert sprint["sprint-id"] == "auth"
    assert isinstance(sprint["goal"], str) and sprint["goal"].strip()
    assert not (folder / "PROGRESS.yaml").exists()

    example = ralph("validate", "-f", "auth")  # the goal `ralph init` wrote is an example, not work to run
    assert example.returncode == 1 and "goal is still the example `ralph init` wrote" in example.stdout
    (folder / "SPRINT.yaml").write_text(
        (folder / "SPRINT.yaml").read_text().replace("Describe what auth should achieve", "Let users log in")
    )
    checked = ralph("validate", "-f", "auth")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SPRINT.yaml" in checked.stdout

    before = snapshot(project)
    preview = ralph("run", "-f", "auth", "--dry-run", "--agent-cmd", GOAL_AGENT)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "## Mode: planning" in preview.stdout
    assert "## Goal (auth)" in preview.stdout
    assert "(none yet)" in preview.stdout
    assert snapshot(project) == before  # a dry run writes nothing: no PROGRESS.yaml, no logs
