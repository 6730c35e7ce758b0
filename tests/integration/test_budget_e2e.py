"""Budgets end to end: `--max-cost`, `--max-tokens`, `--max-runtime` and config `budget:` stop a real `ralph run`.

Cost and tokens come only from agents that report them (the Claude backend): a stand-in `claude` on PATH
(tests/agents/claude_costs.py) prints Claude Code's stream-json with the cost and usage a test chooses.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import AGENTS, PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries


@pytest.fixture
def claude_env(tmp_path: Path, ralph_env: dict[str, str]) -> dict[str, str]:
    """PATH with a `claude` that reports $0.60 and 500 tokens per run (and writes claude-N.txt)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    claude = folder / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "claude_costs.py"}" "$@"\n')
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}{os.pathsep}{ralph_env['PATH']}", "FAKE_CLAUDE_COST": "0.6", "FAKE_CLAUDE_TOKENS": "400"}


@pytest.fixture(autouse=True)
def patient_breaker(project: Path, feature: Path) -> None:
    """The stand-in claude changes a file each time but never finishes a story (no progress): a breaker that
    waits 20 such iterations keeps these tests about budgets."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\ncircuit_breaker:\n  no_progress_threshold: 20\n")


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def assert_budget_stop(
    feature: Path, done: subprocess.CompletedProcess[str], iterations: int, message: str
) -> dict[str, object]:
    assert done.returncode == 1, done.stdout + done.stderr
    status: dict[str, object] = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "budget")
    assert status["exitMessage"] == message
    assert "Raise the budget" in str(status["guidance"])
    assert len(entries(feature)) == iterations
    assert not (feature / "logs" / f"iteration-{iterations + 1}.log").exists()
    return status


def test_max_cost_stops_after_the_iteration_that_reaches_it(
    project: Path, feature: Path, ralph: RalphRunner, claude_env: dict[str, str]
) -> None:
    done = ralph("run", "-n", "10", "--agent", "claude", "--max-cost", "1", env=claude_env)

    status = assert_budget_stop(feature, done, 2, "cost budget reached: $1.20 of max_cost_usd $1.00")
    assert status["costUsd"] == pytest.approx(1.2)
    assert status["tokensUsed"] == 1000
    assert status["model"] == "claude-opus-4-5-20251101"
    assert (project / "claude-2.txt").exists() and not (project / "claude-3.txt").exists()
    assert "cost budget reached" in done.stdout


def test_max_tokens_stops_after_the_iteration_that_reaches_it(
    feature: Path, ralph: RalphRunner, claude_env: dict[str, str]
) -> None:
    done = ralph("run", "-n", "10", "--agent", "claude", "--max-tokens", "1000", env=claude_env)

    status = assert_budget_stop(feature, done, 2, "token budget reached: 1,000 of max_tokens 1,000")
    assert status["tokensUsed"] == 1000


def test_cost_budget_from_the_config(
    project: Path, feature: Path, ralph: RalphRunner, claude_env: dict[str, str]
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  max_cost_usd: 1.5\n")

    done = ralph("run", "-n", "10", "--agent", "claude", env=claude_env)

    status = assert_budget_stop(feature, done, 3, "cost budget reached: $1.80 of max_cost_usd $1.50")
    assert status["costUsd"] == pytest.approx(1.8)


def test_a_budget_is_per_run(feature: Path, ralph: RalphRunner, claude_env: dict[str, str]) -> None:
    first = ralph("run", "-n", "10", "--agent", "claude", "--max-cost", "1", env=claude_env)
    assert_budget_stop(feature, first, 2, "cost budget reached: $1.20 of max_cost_usd $1.00")

    second = ralph("run", "-n", "10", "--agent", "claude", "--max-cost", "1", env=claude_env)

    assert_budget_stop(feature, second, 4, "cost budget reached: $1.20 of max_cost_usd $1.00")


def test_a_command_agent_reports_no_cost_so_a_cost_budget_never_stops_it(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    done = ralph("run", "-n", "2", "--max-cost", "0.01", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert (status["costUsd"], status["tokensUsed"]) == (None, None)


def test_a_tiny_max_runtime_stops_the_run_by_its_runtime_budget(feature: Path, ralph: RalphRunner) -> None:
    # 1 ms: used up before the first agent start or, at the latest, after the first iteration.
    done = ralph("run", "-n", "5", "--max-runtime", "0.001s", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "budget"
    assert status["exitMessage"].startswith("runtime budget reached: ")
    assert "of max_runtime" in status["exitMessage"]
    assert len(entries(feature)) <= 1


@pytest.mark.parametrize("value", ["0s", "0", "-5m", "soon"])
def test_a_max_runtime_that_is_not_a_positive_duration_is_a_one_line_error(
    feature: Path, ralph: RalphRunner, value: str
) -> None:
    done = ralph("run", "--max-runtime", value, "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--max-runtime" in lines[0], done.stderr
    assert not (feature / "logs").exists()
