"""A run started by the previous version resumes: its files (tests/fixtures/previous/, written by main before the
engine's redesign) read as they are, and the next run goes on from them with one set of numbers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json

PREVIOUS = Path(__file__).resolve().parents[1] / "fixtures" / "previous" / "feat"


def resumed(project: Path, env: dict[str, str], ralph: RalphRunner) -> Path:
    assert ralph("init", "feat").returncode == 0
    folder = project / ".ralph" / "feat"
    shutil.copytree(PREVIOUS, folder, dirs_exist_ok=True)
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "the previous run"], cwd=project, env=env, check=True)
    return folder


def test_status_and_report_read_the_previous_versions_files(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    resumed(project, ralph_env, ralph)

    status = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (status["iteration"], status["iterationsCounted"], status["callsNotCounted"]) == (2, 2, 0)
    assert (status["status"], status["exitReason"], status["storiesComplete"]) == ("halted", "max_iterations", 1)
    assert "Iteration:  2 / 2" in ralph("status", "-f", "feat").stdout
    report = ralph("report", "-f", "feat")
    assert report.returncode == 0, report.stderr
    assert "  Completed:       2\n" in report.stdout


def test_a_run_goes_on_from_the_previous_versions_state(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = resumed(project, ralph_env, ralph)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"*": {"write": {"b.txt": "b\n"}, "pass": ["S-2"]}}))

    done = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", agent_cmd("step_agent.py", str(plan)))

    assert done.returncode == 1, done.stdout + done.stderr  # one iteration allowed, S-3 still open
    assert "── Iteration 3 · S-2: Story 2 · this run: 0/1 counted so far" in done.stdout
    assert (folder / "logs" / "iteration-3.log").exists()
    assert "Iteration: 3\n" in (folder / "progress.txt").read_text()
    lines: list[dict[str, Any]] = [
        json.loads(line) for line in (folder / "ralph_metrics.jsonl").read_text().splitlines()
    ]
    assert [(line["iteration"], line.get("counted")) for line in lines] == [(1, None), (2, None), (3, True)]
    state = read_json(folder / "state.json")
    assert (state["iteration"], state["completed_stories"]) == (3, ["S-1", "S-2"])
    assert read_json(folder / "status.json")["iterationsCounted"] == 1
    assert "  Completed:       3\n" in ralph("report", "-f", "feat").stdout
