"""The circuit breaker at the CLI's edge: real `ralph run` and `ralph reset-circuit`, real git, real agent processes.

What the breaker decides and records (no progress, churn, the same error, the failure threshold, a reset and the
counts carried from run to run) is tests/engine/test_breaker.py's, in-process. Here: a damaged state file is one
error line until `ralph reset-circuit` mends it and the CLI's exit code follows the run's end, a real timeout cuts
a real agent off, and the reset refuses what is not a file where it writes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.engine.test_breaker import breaker_state, history
from tests.integration.conftest import Background
from tests.integration.helpers import (
    assert_one_line_error,
    entry_fields,
    progress_entries,
    read_pid,
    wait_dead,
)
from tests.integration.hostile_project import tree

STAGNANT = {"*": {"say": "Looked at the code; nothing to change yet."}}


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def test_reset_circuit_repairs_a_damaged_state_file(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    (feature / ".circuit_breaker_state").write_text('{"garbage": 1}')
    refused = ralph("run", "-n", "1", "--agent-cmd", steps(tmp_path, STAGNANT))
    assert refused.returncode == 1
    assert ".circuit_breaker_state" in refused.stderr and "ralph reset-circuit" in refused.stderr, refused.stderr

    reset = ralph("reset-circuit", "-f", "feat")

    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert "was unreadable" in reset.stdout
    assert breaker_state(feature)["state"] == "CLOSED"
    assert history(feature)[-1][3] == "reset: manual reset by user"
    again = ralph("run", "-n", "1", "--agent-cmd", steps(tmp_path, STAGNANT))
    assert again.returncode == 1, again.stdout + again.stderr
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"


def test_a_timed_out_iteration_is_a_failed_attempt_even_after_real_work(
    project: Path, feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path
) -> None:
    # The one test here that waits: two runs of one `-t 1s` iteration (test_timeout.py covers the process tree).
    first_pid, second_pid = tmp_path / "first.pid", tmp_path / "second.pid"
    partial = {"write": {"partial.txt": "half done\n"}, "pass": ["S-1"], "hang": str(second_pid)}
    plan = {"1": {"hang": str(first_pid)}, "2": partial}
    cmd = steps(tmp_path, plan)

    first = ralph("run", "-n", "1", "-t", "1s", "--agent-cmd", cmd)
    agent = read_pid(first_pid)
    assert agent is not None, first.stdout + first.stderr
    background.adopt(agent)  # teardown kills it, should ralph not have

    assert first.returncode == 1, first.stdout + first.stderr
    assert wait_dead(agent), "the hanging agent survived its timeout"
    assert "timed out" in entries(feature)[0]["Note"]
    state = breaker_state(feature)
    assert (state["consecutive_failures"], state["consecutive_no_progress"]) == (1, 0)

    second = ralph("run", "-n", "1", "-t", "1s", "--agent-cmd", cmd)
    agent = read_pid(second_pid)
    assert agent is not None, second.stdout + second.stderr
    background.adopt(agent)

    assert second.returncode == 1, second.stdout + second.stderr
    assert wait_dead(agent), "the hanging agent survived its timeout"
    assert "timed out" in entries(feature)[1]["Note"]
    # Cut off after real work (S-1 marked passing) it is still a failed attempt: saved, undone, a failure.
    state = breaker_state(feature)
    assert (state["consecutive_failures"], state["consecutive_no_progress"]) == (2, 0)
    assert not (project / "partial.txt").exists()
    assert not read_json(feature / "prd.json")["userStories"][0]["passes"]


NOT_A_FILE = {
    "folder": lambda path: path.mkdir(),
    "fifo": os.mkfifo,
    "link": lambda path: path.symlink_to("/dev/zero"),
}


@pytest.mark.parametrize("kind", sorted(NOT_A_FILE))
@pytest.mark.parametrize("name", [".circuit_breaker_state", ".circuit_breaker_history", ".lock"])
def test_reset_circuit_refuses_what_is_not_a_file_in_place_of_one_it_writes(
    project: Path, feature: Path, ralph: RalphRunner, name: str, kind: str
) -> None:
    """A damaged breaker is what a reset is for; a folder, a FIFO or a link where it writes is not its to replace
    (it ended in "internal error: IsADirectoryError", and replaced the FIFO)."""
    NOT_A_FILE[kind](feature / name)
    before = tree(project)  # never opens a FIFO or a link

    done = ralph("reset-circuit", "-f", "feat", timeout=30)

    line = assert_one_line_error(done, f".ralph/feat/{name}")
    assert line.startswith("ralph: error: ") and "internal error" not in line, line
    assert done.stdout == ""
    assert tree(project) == before
