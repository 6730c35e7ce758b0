"""The circuit breaker, in-process: runs built as `ralph run` builds them, their agents played back (harness.py), real
git and real record files.

No progress (the task state did not move: files that change while no task advances are churn, told as such)
half-opens the breaker at 2 iterations and opens it at 3; an open breaker stops the loop and keeps the next run
from starting until a reset. The same error in 5 failed iterations, or `failure_threshold` failed iterations,
open it too. The agents exit 0 unless a test is about failures, so that task retries stay out of these tests.
The CLI's side (its exit code, a damaged state file's error line, a real timeout) is tests/integration/
test_breaker_e2e.py's.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ralphloop.cli.run_cmd import show_dry_run
from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import Ran, Turn, Turns, build, entries, git_out, ralph, run
from tests.integration.helpers import set_config

STAGNANT = Turn(say="Looked at the code; nothing to change yet.\n")
GUIDANCE = "ralph reset-circuit -f feat"
DIFFERENT_ERRORS = [
    "Error: cannot open the database",
    "TypeError: unsupported operand type",
    "KeyError: 'user'",
    "fatal: not a git repository",
    "npm ERR! missing script: build",
    "ModuleNotFoundError: No module named 'yaml'",
]


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


def assert_opened_by_no_progress(feature: Path, done: Ran, iterations: int = 3) -> None:
    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN, done.outcome
    status = read_json(feature / "status.json")
    assert status["status"] == "circuit_open"
    assert status["exitReason"] == "circuit_open"
    assert status["circuitState"] == "OPEN"
    assert f"no progress in {iterations} iterations in a row" in status["circuitReason"]
    assert GUIDANCE in status["guidance"]
    assert GUIDANCE in done.screen
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


def test_stagnating_agent_half_opens_at_2_and_opens_at_3(feature: Path) -> None:
    done = run(feature.parents[1], Turns(then=STAGNANT), n=10)

    assert_opened_by_no_progress(feature, done)
    assert "HALF_OPEN" in done.screen
    assert all(entry["Status"] == "in-progress" for entry in entries(feature))
    # Exiting 0 without work is no failed attempt: no retries, nothing saved.
    assert read_json(feature / "status.json")["retryCount"] == 0
    assert breaker_state(feature)["consecutive_failures"] == 0


def test_open_circuit_refuses_the_next_run_until_reset_circuit(project: Path, feature: Path) -> None:
    # Iterations 1-3 change nothing; the later ones each finish a story.
    work = {"work-{n}.txt": "work {n}\n"}
    assert_opened_by_no_progress(feature, run(project, Turns(Turn(), Turn(), Turn()), n=10))
    progress_before = (feature / "progress.txt").read_text()

    agent = Turns(Turn(write=work, passes=["S-1"]))
    refused = run(project, agent, n=5)

    assert refused.outcome.reason is ExitReason.CIRCUIT_OPEN and refused.outcome.reason.exit_code == 1
    assert agent.launches == []
    assert not (feature / "logs" / "iteration-4.log").exists()
    assert not (feature / "logs" / "iteration-4.prompt.md").exists()
    assert (feature / "progress.txt").read_text() == progress_before
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("circuit_open", "OPEN")
    assert GUIDANCE in status["guidance"]
    assert GUIDANCE in refused.screen
    assert read_json(feature / "state.json")["iteration"] == 3

    reset = ralph("reset-circuit", "-f", "feat", "--reason", "split the story")

    assert reset.code == 0, reset.out + reset.err
    assert "Circuit breaker reset to CLOSED state" in reset.out
    assert "split the story" in reset.out
    assert history(feature)[-1] == (3, "OPEN", "CLOSED", "reset: split the story")
    state = breaker_state(feature)
    assert state["state"] == "CLOSED"
    counts = (state["consecutive_no_progress"], state["consecutive_failures"], state["consecutive_same_error"])
    assert counts == (0, 0, 0)
    shown = ralph("status", "-f", "feat", "--json")
    assert json.loads(shown.out)["circuitState"] == "CLOSED", shown.out

    again = run(project, Turns(Turn(write=work, passes=["S-1"]), Turn(write=work, passes=["S-2"])), n=2)

    assert again.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    assert (project / "work-5.txt").read_text() == "work 5\n"
    assert len(entries(feature)) == 5
    assert len(history(feature)) == 3  # progress after a reset moves nothing


def test_run_with_reset_circuit_resets_and_runs_in_one_step(project: Path, feature: Path) -> None:
    assert_opened_by_no_progress(feature, run(project, Turns(Turn(), Turn(), Turn()), n=10))

    done = run(project, Turns(Turn(write={"work-{n}.txt": "work {n}\n"})), n=1, reset_circuit=True)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    assert (project / "work-4.txt").read_text() == "work 4\n"
    last = history(feature)[-1]
    assert last[1:3] == ("OPEN", "CLOSED")
    assert last[3].startswith("reset: ") and "--reset-circuit" in last[3], last
    assert breaker_state(feature)["state"] == "CLOSED"


def test_an_agent_that_only_asks_questions_opens_it(project: Path, feature: Path) -> None:
    ask = "Should I use PostgreSQL or SQLite for the store? Which one do you prefer?"
    done = run(project, Turns(then=Turn(say=ask + "\n")), n=10)

    assert_opened_by_no_progress(feature, done)
    assert read_json(feature / "status.json")["questionLoops"] == 3
    assert f"The agent's last words: {ask}" in done.screen  # what it asked is what the user must answer
    assert read_json(feature / "status.json")["lastMessage"] == ask
    assert all("asked questions instead of working" in entry["Note"] for entry in entries(feature))


def test_writing_only_the_progress_log_is_not_progress(project: Path, feature: Path) -> None:
    log = ".ralph/feat/progress.txt"
    done = run(project, Turns(then=Turn(append={log: "\nStill working on it (iteration {n}).\n"})), n=10)

    assert_opened_by_no_progress(feature, done)
    text = (feature / "progress.txt").read_text()
    assert "Still working on it (iteration 3)." in text  # what the agent wrote is kept


def test_new_files_while_no_task_advances_are_churn_not_progress(project: Path, feature: Path) -> None:
    done = run(project, Turns(then=Turn(write={"scratch-{n}.txt": "notes {n}\n"})), n=4)

    assert_opened_by_no_progress(feature, done)
    assert "(files changed in 3 of them, but no task advanced)" in breaker_state(feature)["reason"]
    assert breaker_state(feature)["consecutive_churn"] == 3
    # the work is kept (it is not a failed attempt): only the circuit says it is going nowhere
    assert "scratch-3.txt" in git_out(project, "status", "--porcelain", "--untracked-files=all")


@pytest.mark.parametrize(
    ("turn", "churn"),
    [
        (Turn(rewrite=["app.txt"]), False),  # the same bytes written again: a touch, no change at all
        (Turn(write={"app.txt": "edit {n}\n"}), True),  # new content every time, no task advancing: churn
    ],
    ids=["touch-same-content", "change-content"],
)
def test_a_file_dirty_before_the_loop_counts_only_when_its_content_changes(
    project: Path, feature: Path, turn: Turn, churn: bool
) -> None:
    (project / "app.txt").write_text("committed\n")
    git_out(project, "add", "app.txt")
    git_out(project, "commit", "-q", "-m", "app")
    (project / "app.txt").write_text("dirty before the loop\n")

    done = run(project, Turns(then=turn), n=4)

    assert_opened_by_no_progress(feature, done)  # no task advanced, whatever the file did
    assert breaker_state(feature)["consecutive_churn"] == (3 if churn else 0)
    assert (project / "app.txt").read_text() == ("edit 3\n" if churn else "dirty before the loop\n")


def test_progress_after_two_stagnant_iterations_closes_it_again(project: Path, feature: Path) -> None:
    work = {"work-{n}.txt": "work\n"}
    agent = Turns(Turn(), Turn(), Turn(write=work, passes=["S-1"]), Turn(write=work, passes=["S-2"]))

    done = run(project, agent, n=4)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED")
    moves = history(feature)
    assert [(loop, old, new) for loop, old, new, _ in moves] == [(2, "CLOSED", "HALF_OPEN"), (3, "HALF_OPEN", "CLOSED")]
    assert "circuit recovered" in moves[1][3]
    assert breaker_state(feature)["consecutive_no_progress"] == 0


def test_the_counts_carry_over_from_one_run_to_the_next(project: Path, feature: Path) -> None:
    first = run(project, Turns(then=STAGNANT), n=2)
    assert first.outcome.reason is ExitReason.MAX_ITERATIONS
    assert read_json(feature / "status.json")["circuitState"] == "HALF_OPEN"

    done = run(project, Turns(then=STAGNANT), n=5)

    assert_opened_by_no_progress(feature, done)  # at the third iteration in all, the first of this run


def test_no_progress_threshold_from_config_is_honoured(project: Path, feature: Path) -> None:
    set_config(project, "no_progress_threshold: 3", "no_progress_threshold: 5")

    done = run(project, Turns(then=STAGNANT), n=10)

    assert_opened_by_no_progress(feature, done, iterations=5)
    dry, _, _ = build(project, Turns(), dry_run=True)
    shown = io.StringIO()
    with redirect_stdout(shown):
        show_dry_run(dry)  # what `ralph run --dry-run` prints
    assert "no progress 5" in shown.getvalue(), shown.getvalue()


def many_failures_config(project: Path, failure_threshold: int) -> None:
    set_config(project, "\n# max_retries: 3\n", "\nmax_retries: 9\n")
    set_config(project, "failure_threshold: 5", f"failure_threshold: {failure_threshold}")


def test_the_same_error_five_times_opens_it(project: Path, feature: Path) -> None:
    many_failures_config(project, 9)
    # The same failure in another temp folder and on another line each time.
    error = "Error: cannot open /tmp/build-{rand}/config.json at line {n}\n"

    done = run(project, Turns(then=Turn(err=error, exit=1)), n=20)

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN
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


def test_different_errors_open_it_by_the_failure_threshold(project: Path, feature: Path) -> None:
    many_failures_config(project, 6)

    done = run(project, Turns(*(Turn(err=text + "\n", exit=1) for text in DIFFERENT_ERRORS)), n=20)

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("circuit_open", "OPEN")
    assert "6 failed iterations in a row" in status["circuitReason"]
    assert "same error" not in status["circuitReason"]
    assert len(entries(feature)) == 6
    assert [move[:3] for move in history(feature)] == [(6, "CLOSED", "OPEN")]
    assert breaker_state(feature)["consecutive_same_error"] == 1


def test_different_errors_on_stdout_are_not_the_same_error(project: Path, feature: Path) -> None:
    many_failures_config(project, 9)

    done = run(project, Turns(*(Turn(say=text + "\n", exit=1) for text in DIFFERENT_ERRORS)), n=6)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["circuitState"]) == ("max_iterations", "CLOSED"), status["circuitReason"]


def test_run_with_reset_circuit_repairs_a_damaged_state_file(project: Path, feature: Path) -> None:
    (feature / ".circuit_breaker_state").write_text('{"garbage": 1}')

    done = run(project, Turns(STAGNANT), n=1, reset_circuit=True)  # no RalphError: `ralph: error` is not printed

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert breaker_state(feature)["state"] == "CLOSED"
