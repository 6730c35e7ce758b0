"""The plug-in packages of tests/plugins, installed in the test venv as a user installs a third party's, run
through the real `ralph`: they reach every surface a built-in does, through the same seams."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RalphRunner, read_json, write_prd


def test_an_agent_plugin_runs_with_its_own_parser_and_its_log_reads_through_its_own_reader(
    feature: Path, ralph: RalphRunner
) -> None:
    write_prd(feature, 1)

    done = ralph("run", "--agent", "tape", "-n", "1", "--no-archive")

    assert done.returncode == 0, done.stderr
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is True
    status = read_json(feature / "status.json")
    assert status["agent"] == "tape"
    assert status["costUsd"] == 0.25  # its parser read the cost from its own `done` line
    metrics = [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert [line.get("agent") for line in metrics] == ["tape"]

    logs = ralph("logs", "1")

    assert logs.returncode == 0, logs.stderr
    assert "tape says: working on S-1" in logs.stdout
    assert "tape did: marked S-1 as passing" in logs.stdout
    assert "tape done: S-1 passes" in logs.stdout
    assert '{"say"' not in logs.stdout  # read, not dumped
    raw = ralph("logs", "1", "--raw")
    assert '{"say": "working on S-1"}' in raw.stdout


def test_an_agent_plugin_is_shown_by_a_dry_run_with_the_defaults_it_left_out(feature: Path, ralph: RalphRunner) -> None:
    write_prd(feature, 1)

    done = ralph("run", "--agent", "tape", "--dry-run")

    assert done.returncode == 0, done.stderr
    assert "# Agent: tape (from --agent)" in done.stdout
    assert "-m ralphloop_tape.cli" in done.stdout
    # it sets no permissions of its own: the setting's is shown
    assert "# Permissions: edits" in done.stdout
