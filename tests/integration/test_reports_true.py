"""Every report ralph makes is true (the engine issue's nine cases) at the CLI's edge: a circuit reset from another
command shows at once in `ralph status` and `ralph monitor`, after a real `ralph run` (real agent processes, real git)
stopped on it with exit 1. The other cases (rejected work, a failed last attempt, one-story runs, one set of numbers,
churn, the agent's last words) are tests/engine/test_reports_true.py's, in-process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json, write_prd


def git(project: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def prepared(project: Path, env: dict[str, str], ralph: RalphRunner, stories: int = 3, config: str = "") -> Path:
    """.ralph/feat with `stories` open stories and `config` in .ralph/config.yaml, all committed."""
    assert ralph("init", "feat").returncode == 0
    folder = project / ".ralph" / "feat"
    write_prd(folder, stories)
    if config:
        (project / ".ralph" / "config.yaml").write_text(config)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")
    return folder


def passing(folder: Path) -> list[str]:
    """The stories prd.json marks passing (tests/integration/test_reports_true_review.py and tests/engine use
    these helpers too)."""
    return [story["id"] for story in read_json(folder / "prd.json")["userStories"] if story["passes"]]


def plan(tmp_path: Path, steps: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(steps))
    return agent_cmd("step_agent.py", str(path))


# ---------------------------------------------------------------- 6. reset-circuit shows at once


def test_status_and_monitor_show_a_reset_circuit_at_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph)
    assert ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {}})).returncode == 1
    assert json.loads(ralph("status", "-f", "feat", "--json").stdout)["status"] == "circuit_open"

    assert ralph("reset-circuit", "-f", "feat").returncode == 0

    report = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (report["status"], report["circuitState"], report["exitReason"]) == ("halted", "CLOSED", "circuit_open")
    shown = ralph("status", "-f", "feat").stdout
    assert "Status:     halted (stopped on an open circuit, reset since: run again to go on)" in shown
    assert "Circuit:" not in shown
    monitor = ralph("monitor", "-f", "feat").stdout
    assert "circuit CLOSED" in monitor or "Circuit" not in monitor
    assert "Ralph has exited: halted" in monitor
