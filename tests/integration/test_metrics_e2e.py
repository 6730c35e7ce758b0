"""ralph_metrics.jsonl through real runs with command agents: a line per iteration with what is known, the
seed's blocks on screen, and `ralph report` over every run of the feature."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd

SEED_004_KEYS = (
    "iteration",
    "timestamp",
    "duration_seconds",
    "model",
    "stop_reason",
    "usage",
    "files_changed",
    "success",
    "exit_code",
)
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")


def lines(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def test_a_command_agent_gets_a_line_per_iteration_with_nulls_for_what_it_does_not_report(
    feature: Path, ralph: RalphRunner
) -> None:
    agent = agent_cmd("story_agent.py", "--fail-on", "S-2")
    done = ralph("run", "-f", "feat", "--agent-cmd", agent, "-n", "2", "-v")  # -v: the Iteration Metrics blocks
    assert done.returncode == 1, done.stdout + done.stderr
    first, second = lines(feature)
    assert list(first)[:9] == list(SEED_004_KEYS)  # the seed's schema, in its order (the rest is ralph's)
    assert first["usage"] == dict.fromkeys(USAGE_KEYS)  # unknown, not zero
    assert (first["model"], first["cost_usd"], first["num_turns"], first["session_id"]) == (None, None, None, None)
    assert (first["task_id"], first["outcome"], first["success"], first["exit_code"]) == ("S-1", "complete", True, 0)
    assert first["files_changed"] == 2  # work-S-1.txt and prd.json; ralph's own files never count
    assert (second["task_id"], second["outcome"], second["success"], second["exit_code"]) == ("S-2", "failed", False, 1)
    assert done.stdout.count("--- Iteration Metrics ---") == 2
    assert "Tokens: not reported" in done.stdout and "Success: ✗" in done.stdout
    assert "FINAL SUMMARY" in done.stdout and "Completed:       2 / 2" in done.stdout
    assert "Success Rate:    50%" in done.stdout
    assert "Metrics log saved to: .ralph/feat/ralph_metrics.jsonl" in done.stdout


def test_lines_accumulate_across_runs_and_report_sums_them(feature: Path, ralph: RalphRunner) -> None:
    agent = agent_cmd("story_agent.py")
    assert ralph("run", "-f", "feat", "--agent-cmd", agent, "-n", "1").returncode == 1
    assert ralph("run", "-f", "feat", "--agent-cmd", agent, "--no-archive").returncode == 0
    assert [line["iteration"] for line in lines(feature)] == [1, 2, 3]
    text = ralph("report", "-f", "feat")
    assert text.returncode == 0, text.stderr
    assert "Completed:       3\n" in text.stdout and "Success Rate:    100%" in text.stdout
    assert "Files Changed:" in text.stdout and "Total:           6 files" in text.stdout
    report = json.loads(ralph("report", "-f", "feat", "--json").stdout)
    assert report["summary"]["iterations"] == 3


def test_the_metrics_file_is_ignored_by_git_and_never_counted_as_work(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    done = ralph("run", "-f", "feat", "--agent-cmd", agent_cmd("say.py", "nothing to do"), "-n", "1")
    assert done.returncode == 1
    assert (feature / "ralph_metrics.jsonl").exists()
    [line] = lines(feature)
    assert line["files_changed"] == 0
    assert "ralph_metrics.jsonl" in (project / ".ralph" / ".gitignore").read_text()
