"""Lifecycle hooks and quality gates at the CLI's edge: real `ralph run`, real git, real agent and hook processes.

What the loop runs when, with which variables, and what it decides and records from a hook's or a gate's result
(exit 75, a failed gate's retry, completion under `trust`) is tests/engine/test_hooks_gates.py's, in-process. Here:
a hook that outlives its timeout is stopped for real, and a bad `hooks:` or `quality_checks:` section is one error
line that changes nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.engine.test_hooks_gates import configure
from tests.integration.helpers import assert_one_line_error, git, snapshot


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def test_a_hook_that_outlives_its_timeout_is_stopped_and_only_a_warning(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    write_prd(feature, 1)
    configure(project, hooks={"timeout": "1s", "pre_iteration": "echo waiting; exec sleep 300"})

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, output(done)
    assert "hook pre_iteration: timed out" in done.stdout
    assert "waiting" in (feature / "logs" / "hooks" / "pre_iteration-1.log").read_text()


# ---------------------------------------------------------------- bad configuration


@pytest.mark.parametrize(
    ("sections", "needle"),
    [
        ({"hooks": {"post_iter": "true"}}, "hooks.post_iter"),
        ({"hooks": {"pre_run": ""}}, "hooks.pre_run"),
        ({"hooks": {"on_halt": ["echo fine", "  "]}}, "hooks.on_halt[1]"),
        ({"hooks": ["echo a"]}, "hooks"),
        ({"quality_checks": ["a", "b"]}, "quality_checks"),
        ({"quality_checks": {"tests": {"cmd": "pytest"}}}, "quality_checks.tests.cmd"),
    ],
)
def test_a_bad_hooks_or_gates_section_is_a_one_line_error_that_changes_nothing(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    tmp_path: Path,
    sections: dict[str, Any],
    needle: str,
) -> None:
    configure(project, **sections)
    before = snapshot(project)
    branches = git(project, ralph_env, "branch", "--list")
    ran = tmp_path / "agent.jsonl"

    done = ralph("run", "--agent-cmd", agent_cmd("record_env.py", str(ran)))

    assert_one_line_error(done, ".ralph/config.yaml", needle)
    assert snapshot(project) == before
    assert git(project, ralph_env, "branch", "--list") == branches
    assert not ran.exists()


def test_a_bad_section_in_the_user_config_names_that_file(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    home = Path(ralph_env["RALPH_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"hooks": {"on_finish": "true"}}))
    before = snapshot(project)

    done = ralph("run", "--agent-cmd", agent_cmd("story_agent.py"))

    assert_one_line_error(done, str(home / "config.yaml"), "hooks.on_finish")
    assert snapshot(project) == before
