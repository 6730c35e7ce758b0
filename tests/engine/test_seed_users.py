"""A seed's user switching to ralph (issue 21), in-process: runs of seed 000's fix plan and seed 002's story specs at
the project root, built as `ralph run` builds them (nothing named: the root workspace), their agents played back
(harness.py), real git and real record files. What the loop decides for their signals, prose and circuit, and what it
records. The CLI's side (the seed's flags refused in one line, the printed commands that work when pasted, the
dry runs and `ralph status` before a run) is tests/integration/test_seed_users.py's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, ralph, run, signal
from tests.integration.test_seed_users import fix_plan_root, story_root

CONFIDENT = "I finished. All tasks are complete. The feature is complete. Nothing left to do. No remaining tasks."
# tests/agents/spec_agent.py's "done": its attempt noted in work-ID.txt, the story done and a learning, by tags
SPEC_DONE = Turn(
    append={"work-{task}.txt": "attempt in iteration {n}\n"},
    say="Implemented story {task}.\n<ralph>LEARN: story {task} needed care</ralph>\n<ralph>DONE {task}</ralph>\n",
)
BOOM = Turn(say="boom\n", exit=1)  # sh -c 'echo boom; exit 1'


def completion(project: Path, mode: str) -> None:
    (project / ".ralph").mkdir(exist_ok=True)
    (project / ".ralph" / "config.yaml").write_text(f"completion: {mode}\n")


def status_json() -> dict[str, object]:
    shown = ralph("status", "--json")
    assert shown.code == 0, shown.err
    data: dict[str, object] = json.loads(shown.out)
    return data


def sed_done(text: str) -> str:
    """`sed -i s/pending/done/`: the first `pending` on each line."""
    return "".join(re.sub("pending", "done", line, count=1) for line in text.splitlines(keepends=True))


def test_done_clears_current_story(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    story_root(project, ralph_env)

    done = run(project, Turns(then=SPEC_DONE), feature=None, n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS, done.screen  # 9.2 still open
    assert done.outcome.reason.exit_code == 1
    state = read_json(project / ".ralph" / "state.json")
    assert state["completed_stories"] == ["9.1"]
    assert state["current_story"] is None and state["retry_count"] == 0


def test_five_failures_in_a_row_open_the_circuit_in_a_fix_plan(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    fix_plan_root(project, ralph_env)

    done = run(project, Turns(then=BOOM), feature=None)

    assert done.outcome.reason.exit_code == 1
    status = status_json()
    assert (status["exitReason"], status["totalIterations"]) == ("circuit_open", 5), done.screen
    assert "retries_exhausted" not in done.screen


@pytest.mark.parametrize("mode", ["trust", "verify"])
def test_a_confidence_of_40_ends_the_loop_only_under_completion_trust(
    project: Path, home: Path, ralph_env: dict[str, str], mode: str
) -> None:
    fix_plan_root(project, ralph_env)
    completion(project, mode)

    done = run(project, Turns(then=Turn(say=CONFIDENT + "\n")), feature=None, n=2)

    status = status_json()
    if mode == "trust":  # seed 000, UC-2 6a: no explicit signal, but confident prose is a claim
        assert done.outcome.reason is ExitReason.COMPLETE, done.screen
        assert (status["exitReason"], status["totalIterations"]) == ("complete", 1)
        assert "confidence 50 ≥ 40" in done.screen
    else:  # verify: prose never ends a run, and no claim was made to refuse
        assert done.outcome.reason.exit_code == 1
        assert (status["exitReason"], status["totalIterations"]) == ("max_iterations", 2)


def test_confident_prose_with_a_blocked_signal_is_no_claim_under_trust(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    fix_plan_root(project, ralph_env)
    completion(project, "trust")
    agent = Turns(Turn(first=signal("blocked", "need a key"), say=CONFIDENT + "\n"))

    done = run(project, agent, feature=None, n=1)
    analyzed = ralph("analyze", ".ralph/logs/iteration-1.log", "--json")

    assert done.outcome.reason.exit_code == 1, done.screen
    assert "ALL COMPLETE" not in done.screen
    assert status_json()["exitReason"] != "complete"
    assert json.loads(analyzed.out)["completion_claimed"] is False


def test_confident_prose_that_says_not_done_is_no_claim_even_under_trust(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    fix_plan_root(project, ralph_env)
    completion(project, "trust")
    reply = CONFIDENT + "\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---\n"

    done = run(project, Turns(then=Turn(say=reply)), feature=None, n=1)

    assert done.outcome.reason.exit_code == 1
    assert status_json()["exitReason"] == "max_iterations"


def test_a_story_the_agent_marks_done_itself_is_not_done(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    story_root(project, ralph_env)
    spec_file = next((project / "specs").rglob("story-9.1-*.md"))
    relative = str(spec_file.relative_to(project))
    sneaky = Turn(write={relative: sed_done(spec_file.read_text())}, say="finished\n")

    done = run(project, Turns(sneaky), feature=None, n=1)

    assert done.outcome.reason.exit_code == 1, done.screen  # no DONE signal: a failed attempt, not ALL COMPLETE
    assert "ALL COMPLETE" not in done.screen
    assert "status: pending" in spec_file.read_text()
    progress = (project / "progress.txt").read_text()
    assert "done itself: put back to pending" in progress and "[DONE] Story 9.1" not in progress
    assert read_json(project / ".ralph" / "state.json")["completed_stories"] == []

    # its own edit, and the signal: done once, by ralph
    honest = Turn(write={relative: sed_done(spec_file.read_text())}, say="<ralph>DONE 9.1</ralph>\n")
    again = run(project, Turns(honest), feature=None, n=1)
    assert "[DONE] Story 9.1" in (project / "progress.txt").read_text(), again.screen
    assert "status: done" in spec_file.read_text()
