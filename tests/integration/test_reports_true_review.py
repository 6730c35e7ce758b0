"""A second look at "every report true", as a demanding user would try it, at the CLI's edge: the real `ralph` CLI,
real agent processes, real git, and the commands ralph prints run as a user would paste them. The reports that were
still false (a one-story run, a goal step's failed gate, a usage-limited call's mark, a narrowed run's counts, a
broken task file, a failed attempt that left the run's branch) are tests/engine/test_reports_true_review.py's."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from tests.conftest import RalphRunner
from tests.integration.test_goal_mode import SPRINT_DIR, run_goal, sprint_yaml, write_sprint
from tests.integration.test_reports_true import plan


def pasted(command: str, project: Path, env: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    """A `ralph ...` command as ralph printed it, run as a user would paste it (ralph on PATH)."""
    words = shlex.split(command)
    assert words[0] == "ralph", command
    return subprocess.run(
        [*words, *more], cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_commands_an_open_circuit_prints_for_a_folder_outside_dot_ralph_work_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    write_sprint(project, ralph_env, sprint_yaml())

    done = run_goal(ralph, "-n", "5", cmd=plan(tmp_path, {"*": {"say": "no JSON result"}}))

    assert done.returncode == 1 and "circuit_open" in done.stdout, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    what = next(line for line in lines if "(ralph status" in line)
    shown = re.findall(r"\((ralph (?:logs|status) [^)]*)\)", what)  # what the agent did, and the progress log
    assert [command.split()[1] for command in shown] == ["logs", "status"], what
    reset = next(line for line in lines if "Then reset and continue:" in line).split(": ", 1)[1]
    reset_cmd, _, run_cmd = reset.partition("   (or: ")
    for command in shown:
        assert pasted(command, project, ralph_env).returncode == 0, command
    assert pasted(reset_cmd, project, ralph_env).returncode == 0, reset_cmd
    assert "Status:     halted" in ralph("status", "-f", SPRINT_DIR).stdout
    dry = pasted(run_cmd.rstrip(")"), project, ralph_env, "--dry-run", "--agent-cmd", "true")
    assert dry.returncode == 0, (run_cmd, dry.stderr)


def test_the_command_retries_exhausted_prints_in_goal_mode_works_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text("max_retries: 2\n")
    write_sprint(project, ralph_env, sprint_yaml())

    done = run_goal(ralph, "-n", "5", cmd=plan(tmp_path, {"*": {"exit": 3}}))

    assert "retries_exhausted" in done.stdout, done.stdout + done.stderr
    told = next(line for line in done.stdout.splitlines() if "Human intervention required" in line)
    command = told.split("then run: ", 1)[1]
    dry = pasted(command, project, ralph_env, "--dry-run", "--agent-cmd", "true")
    assert dry.returncode == 0, (command, dry.stderr)
