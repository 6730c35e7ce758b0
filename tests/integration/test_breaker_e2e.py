"""The circuit breaker end to end: real `ralph run`, real git, real agent processes.

No progress (the task state did not move: files that change while no task advances are churn, told as such)
half-opens the breaker at 2 iterations and opens it at 3; an open breaker stops the loop and keeps the next run
from starting until a reset. The same error in 5 failed iterations, or `failure_threshold` failed iterations,
open it too. The agents exit 0 unless a test is about failures, so that task retries stay out of these tests.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import (
    assert_one_line_error,
    entry_fields,
    git,
    progress_entries,
    read_pid,
    set_config,
    wait_dead,
)
from tests.integration.hostile_project import tree

STAGNANT = {"*": {"say": "Looked at the code; nothing to change yet."}}
GUIDANCE = "ralph reset-circuit -f feat"
DIFFERENT_ERRORS = [
    "Error: cannot open the database",
    "TypeError: unsupported operand type",
    "KeyError: 'user'",
    "fatal: not a git repository",
    "npm ERR! missing script: build",
    "ModuleNotFoundError: No module named 'yaml'",
]


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def history(feature: Path) -> list[tuple[int, str, str, str]]:
    """(loop, from, to, reason) of every transition in .circuit_breaker_history."""
    path = feature / ".circuit_breaker_history"
    if not path.exists():
        return []
    return [
        (item["loop"], item["from_state"], item["to_state"], item["reason"]) for item in read_json(path)["transitions"]
    ]


def breaker_state(feature: Path) -> dict[str, Any]:
    data: dict[str, Any] = read_json(feature / ".circuit_breaker_state")
    return data


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def assert_opened_by_no_progress(feature: Path, done: subprocess.CompletedProcess[str], iterations: int = 3) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["status"] == "circuit_open"
    assert status["exitReason"] == "circuit_open"
    assert status["circuitState"] == "OPEN"
    assert f"no progress in {iterations} iterations in a row" in status["circuitReason"]
    assert GUIDANCE in status["guidance"]
    assert GUIDANCE in done.stdout
    assert len(entries(feature)) == iterations
    assert (feature / "logs" / f"iteration-{iterations}.log").exists()
    assert not (feature / "logs" / f"iteration-{iterations + 1}.log").exists()
    moves = history(feature)
    assert [(loop, old, new) for loop, old, new, _ in moves] == [
        (2, "CLOSED", "HALF_OPEN"),
        (iterations, "HALF_OPEN", "OPEN"),
    ]
    assert moves[0][3].startswith("monitoring mode"), moves
    assert breaker_state(feature)["state"] == "OPEN"
    assert breaker_state(feature)["consecutive_no_progress"] == iterations


def test_stagnating_agent_half_opens_at_2_and_opens_at_3(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    done = ralph("run", "-n", "10", "--agent-cmd", steps(tmp_path, STAGNANT))

    assert_opened_by_no_progress(feature, done)
    assert "HALF_OPEN" in done.stdout
    assert all(entry["Status"] == "in-progress" for entry in entries(feature))
    # Exiting 0 without work is no failed attempt: no retries, nothing saved.
    assert read_json(feature / "status.json")["retryCount"] == 0
    assert breaker_state(feature)["consecutive_failures"] == 0


def test_open_circuit_refuses_the_next_run_until_reset_circuit(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    # Iterations 1-3 change nothing; the later ones each finish a story.
    work = {"write": {"work-{n}.txt": "work {n}\n"}}
    cmd = steps(tmp_path, {"1": {}, "2": {}, "3": {}, "4": {**work, "pass": ["S-1"]}, "5": {**work, "pass": ["S-2"]}})
    assert_opened_by_no_progress(feature, ralph("run", "-n", "10", "--agent-cmd", cmd))
    progress_before = (feature / "progress.txt").read_text()

    refused = ralph("run", "-n", "5", "--agent-cmd", cmd)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert not (feature / "logs" / "iteration-4.log").exists()
    assert not (feature / "logs" / "iteration-4.prompt.md").exists()
    assert (feature / "progress.txt").read_text() == progress_before
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("circuit_open", "OPEN")
    assert GUIDANCE in status["guidance"]
    assert GUIDANCE in refused.stdout
    assert read_json(feature / "state.json")["iteration"] == 3

    reset = ralph("reset-circuit", "-f", "feat", "--reason", "split the story")

    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert "Circuit breaker reset to CLOSED state" in reset.stdout
    assert "split the story" in reset.stdout
    assert history(feature)[-1] == (3, "OPEN", "CLOSED", "reset: split the story")
    state = breaker_state(feature)
    assert state["state"] == "CLOSED"
    counts = (state["consecutive_no_progress"], state["consecutive_failures"], state["consecutive_same_error"])
    assert counts == (0, 0, 0)
    shown = ralph("status", "-f", "feat", "--json")
    assert json.loads(shown.stdout)["circuitState"] == "CLOSED", shown.stdout

    again = ralph("run", "-n", "2", "--agent-cmd", cmd)

    assert again.returncode == 1, again.stdout + again.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    assert (project / "work-5.txt").read_text() == "work 5\n"
    assert len(entries(feature)) == 5
    assert len(history(feature)) == 3  # progress after a reset moves nothing


def test_run_with_reset_circuit_resets_and_runs_in_one_step(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    cmd = steps(tmp_path, {"1": {}, "2": {}, "3": {}, "*": {"write": {"work-{n}.txt": "work {n}\n"}}})
    assert_opened_by_no_progress(feature, ralph("run", "-n", "10", "--agent-cmd", cmd))

    done = ralph("run", "--reset-circuit", "-n", "1", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    assert (project / "work-4.txt").read_text() == "work 4\n"
    last = history(feature)[-1]
    assert last[1:3] == ("OPEN", "CLOSED")
    assert last[3].startswith("reset: ") and "--reset-circuit" in last[3], last
    assert breaker_state(feature)["state"] == "CLOSED"


def test_an_agent_that_only_asks_questions_opens_it(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    ask = "Should I use PostgreSQL or SQLite for the store? Which one do you prefer?"
    done = ralph("run", "-n", "10", "--agent-cmd", steps(tmp_path, {"*": {"say": ask}}))

    assert_opened_by_no_progress(feature, done)
    assert read_json(feature / "status.json")["questionLoops"] == 3
    assert f"The agent's last words: {ask}" in done.stdout  # what it asked is what the user must answer
    assert read_json(feature / "status.json")["lastMessage"] == ask
    assert all("asked questions instead of working" in entry["Note"] for entry in entries(feature))


def test_writing_only_the_progress_log_is_not_progress(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    log = ".ralph/feat/progress.txt"
    cmd = steps(tmp_path, {"*": {"append": {log: "\nStill working on it (iteration {n}).\n"}}})

    done = ralph("run", "-n", "10", "--agent-cmd", cmd)

    assert_opened_by_no_progress(feature, done)
    text = (feature / "progress.txt").read_text()
    assert "Still working on it (iteration 3)." in text  # what the agent wrote is kept


def test_new_files_while_no_task_advances_are_churn_not_progress(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    cmd = steps(tmp_path, {"*": {"write": {"scratch-{n}.txt": "notes {n}\n"}}})

    done = ralph("run", "-n", "4", "--agent-cmd", cmd)

    assert_opened_by_no_progress(feature, done)
    assert "(files changed in 3 of them, but no task advanced)" in breaker_state(feature)["reason"]
    assert breaker_state(feature)["consecutive_churn"] == 3
    # the work is kept (it is not a failed attempt): only the circuit says it is going nowhere
    assert "scratch-3.txt" in git(project, ralph_env, "status", "--porcelain", "--untracked-files=all")


@pytest.mark.parametrize(
    ("plan", "churn"),
    [
        ({"*": {"rewrite": ["app.txt"]}}, False),  # the same bytes written again: a touch, no change at all
        ({"*": {"write": {"app.txt": "edit {n}\n"}}}, True),  # new content every time, no task advancing: churn
    ],
    ids=["touch-same-content", "change-content"],
)
def test_a_file_dirty_before_the_loop_counts_only_when_its_content_changes(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    tmp_path: Path,
    plan: dict[str, Any],
    churn: bool,
) -> None:
    (project / "app.txt").write_text("committed\n")
    git(project, ralph_env, "add", "app.txt")
    git(project, ralph_env, "commit", "-q", "-m", "app")
    (project / "app.txt").write_text("dirty before the loop\n")

    done = ralph("run", "-n", "4", "--agent-cmd", steps(tmp_path, plan))

    assert_opened_by_no_progress(feature, done)  # no task advanced, whatever the file did
    assert breaker_state(feature)["consecutive_churn"] == (3 if churn else 0)
    assert (project / "app.txt").read_text() == ("edit 3\n" if churn else "dirty before the loop\n")


def test_progress_after_two_stagnant_iterations_closes_it_again(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    work = {"write": {"work-{n}.txt": "work\n"}}
    cmd = steps(tmp_path, {"1": {}, "2": {}, "3": {**work, "pass": ["S-1"]}, "4": {**work, "pass": ["S-2"]}})

    done = ralph("run", "-n", "4", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    moves = history(feature)
    assert [(loop, old, new) for loop, old, new, _ in moves] == [(2, "CLOSED", "HALF_OPEN"), (3, "HALF_OPEN", "CLOSED")]
    assert "circuit recovered" in moves[1][3]
    assert breaker_state(feature)["consecutive_no_progress"] == 0


def test_the_counts_carry_over_from_one_run_to_the_next(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    cmd = steps(tmp_path, STAGNANT)
    first = ralph("run", "-n", "2", "--agent-cmd", cmd)
    assert first.returncode == 1, first.stdout + first.stderr
    assert read_json(feature / "status.json")["circuitState"] == "HALF_OPEN"

    done = ralph("run", "-n", "5", "--agent-cmd", cmd)

    assert_opened_by_no_progress(feature, done)  # at the third iteration in all, the first of this run


def test_no_progress_threshold_from_config_is_honoured(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    set_config(project, "no_progress_threshold: 3", "no_progress_threshold: 5")

    done = ralph("run", "-n", "10", "--agent-cmd", steps(tmp_path, STAGNANT))

    assert_opened_by_no_progress(feature, done, iterations=5)
    dry = ralph("run", "--dry-run", "--agent-cmd", steps(tmp_path, STAGNANT))
    assert "no progress 5" in dry.stdout, dry.stdout


def many_failures_config(project: Path, failure_threshold: int) -> None:
    set_config(project, "\n# max_retries: 3\n", "\nmax_retries: 9\n")
    set_config(project, "failure_threshold: 5", f"failure_threshold: {failure_threshold}")


def test_the_same_error_five_times_opens_it(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    many_failures_config(project, 9)
    # The same failure in another temp folder and on another line each time.
    error = "Error: cannot open /tmp/build-{rand}/config.json at line {n}"
    cmd = steps(tmp_path, {"*": {"say_err": error, "exit": 1}})

    done = ralph("run", "-n", "20", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("circuit_open", "OPEN")
    assert "the same error in 5 iterations in a row" in status["circuitReason"]
    assert "cannot open" in status["circuitReason"]
    assert GUIDANCE in status["guidance"]
    assert "the last error: " in status["guidance"]
    assert len(entries(feature)) == 5
    assert all(entry["Status"] == "failed" for entry in entries(feature))
    assert history(feature) == [(5, "CLOSED", "OPEN", status["circuitReason"])]
    state = breaker_state(feature)
    assert (state["consecutive_same_error"], state["consecutive_failures"]) == (5, 5)


def test_different_errors_open_it_by_the_failure_threshold(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    many_failures_config(project, 6)
    plan = {str(n): {"say_err": text, "exit": 1} for n, text in enumerate(DIFFERENT_ERRORS, start=1)}

    done = ralph("run", "-n", "20", "--agent-cmd", steps(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("circuit_open", "OPEN")
    assert "6 failed iterations in a row" in status["circuitReason"]
    assert "same error" not in status["circuitReason"]
    assert len(entries(feature)) == 6
    assert [move[:3] for move in history(feature)] == [(6, "CLOSED", "OPEN")]
    assert breaker_state(feature)["consecutive_same_error"] == 1


def test_different_errors_on_stdout_are_not_the_same_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    many_failures_config(project, 9)
    plan = {str(n): {"say": text, "exit": 1} for n, text in enumerate(DIFFERENT_ERRORS, start=1)}

    done = ralph("run", "-n", "6", "--agent-cmd", steps(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED"), status["circuitReason"]


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


def test_run_with_reset_circuit_repairs_a_damaged_state_file(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    (feature / ".circuit_breaker_state").write_text('{"garbage": 1}')

    done = ralph("run", "--reset-circuit", "-n", "1", "--agent-cmd", steps(tmp_path, STAGNANT))

    assert "ralph: error" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert breaker_state(feature)["state"] == "CLOSED"


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
