"""<ralph> tags and `ralph signal` records in the records, .response_analysis, and question-only iterations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries

QUESTION = "Should I use PostgreSQL or SQLite? Let me know which you prefer.\n"


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def entries(feature: Path) -> list[str]:
    return progress_entries((feature / "progress.txt").read_text())


def learnings(entry: str) -> list[str]:
    """The items under `Learnings:` in one progress entry."""
    lines = entry.splitlines()
    start = lines.index("Learnings:") + 1
    found = []
    for line in lines[start:]:
        if not line.startswith("  - "):
            break
        found.append(line[4:])
    return found


def test_learnings_from_tags_and_signals_go_to_progress(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    reply = "Done for now.\n<ralph>LEARN: the config loader caches its results</ralph>\n"
    plan = {
        "1": {"signals": [["learn", "run make setup before the tests"]], "say": reply},
        "2": {"say": "nothing learned\n"},
    }

    done = ralph("run", "-n", "2", "--agent-cmd", plan_agent(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    first, second = entries(feature)
    assert learnings(first) == ["the config loader caches its results", "run make setup before the tests"]
    assert "Learnings:" not in second  # a record counts for its own iteration only
    # The next iteration sees them through the progress log it is given.
    assert "  - run make setup before the tests" in (feature / "logs" / "iteration-2.prompt.md").read_text()


@pytest.mark.parametrize("via", ["tag", "signal"])
def test_done_for_a_story_that_does_not_pass_is_noted(
    feature: Path, ralph: RalphRunner, tmp_path: Path, via: str
) -> None:
    steps: dict[str, Any] = {"say": "<ralph>DONE S-1</ralph>\n"} if via == "tag" else {"signals": [["done", "S-1"]]}

    done = ralph("run", "-n", "2", "--agent-cmd", plan_agent(tmp_path, {"1": steps, "2": {"say": "hm\n"}}))

    assert done.returncode == 1, done.stdout + done.stderr
    first, second = entries(feature)
    assert entry_fields(first)["Status"] == "in-progress"
    assert "agent signalled DONE S-1, but it does not pass in the task file" in entry_fields(first)["Note"]
    assert "DONE" not in entry_fields(second)["Note"]
    prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "Note from ralph: you signalled DONE S-1, but S-1 still does not pass in the task file" in prompt
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is False


def test_done_for_a_story_that_passes_is_not_noted(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    plan = {"1": {"pass": ["S-1"], "say": "<ralph>DONE S-1</ralph>\n"}, "2": {"say": "hm\n"}}

    done = ralph("run", "-n", "2", "--agent-cmd", plan_agent(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    first = entries(feature)[0]
    assert entry_fields(first)["Status"] == "complete"
    assert "does not pass" not in first
    assert "Note from ralph" not in (feature / "logs" / "iteration-2.prompt.md").read_text()


@pytest.mark.parametrize("via", ["tag", "signal"])
def test_fail_makes_the_iteration_failed(feature: Path, ralph: RalphRunner, tmp_path: Path, via: str) -> None:
    reason = "the vendored parser cannot read UTF-16"
    steps: dict[str, Any] = (
        {"say": f"<ralph>FAIL S-1: {reason}</ralph>\n"} if via == "tag" else {"signals": [["fail", "S-1", reason]]}
    )

    # The agent exits 0: the failure comes from the signal alone.
    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, {"*": steps}))

    assert done.returncode == 1, done.stdout + done.stderr
    (entry,) = entries(feature)
    fields = entry_fields(entry)
    assert fields["Status"] == "failed"
    assert fields["Agent"].split(" · ")[1] == "exit 0"
    assert f"agent signalled FAIL S-1: {reason}" in fields["Note"]
    assert read_json(feature / ".response_analysis")["failed"] == [{"id": "S-1", "reason": reason}]


def test_response_analysis_holds_the_last_iteration(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    def reply(number: int) -> str:
        return (
            f"Iteration {number}: wrote the lexer.\n<ralph>LEARN: lesson {number}</ralph>\n\n"
            "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nTASKS_COMPLETED_THIS_LOOP: 0\n"
            f"FILES_MODIFIED: {number + 1}\nTESTS_STATUS: FAILING\nWORK_TYPE: IMPLEMENTATION\n"
            f"EXIT_SIGNAL: false\nRECOMMENDATION: continue with step {number + 1}\n---END_RALPH_STATUS---\n"
        )

    cmd = plan_agent(tmp_path, {"1": {"say": reply(1)}, "2": {"say": reply(2)}})

    done = ralph("run", "-n", "2", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    analysis = read_json(feature / ".response_analysis")
    assert isinstance(analysis["schema_version"], int)
    assert analysis["iteration"] == 2
    assert isinstance(analysis["analyzed_at"], str)
    expected = {
        "completion_claimed": False,
        "claim_sources": [],
        "promise": False,
        "exit_signal": False,
        "status": "IN_PROGRESS",
        "tasks_completed": 0,
        "files_modified": 3,
        "tests_status": "FAILING",
        "work_type": "IMPLEMENTATION",
        "recommendation": "continue with step 3",
        "learnings": ["lesson 2"],
        "done_ids": [],
        "failed": [],
        "blocked": False,
        "needs_human": None,
        "signals": ["status_block", "ralph_tags"],
        "test_only": False,
        "asking_questions": False,
    }
    missing = [key for key in expected if key not in analysis and key != "needs_human"]
    assert not missing, missing
    for key, value in expected.items():
        if key != "needs_human":
            assert analysis[key] == value, (key, analysis[key])
    assert isinstance(analysis["confidence"], int)
    assert 0 <= analysis["confidence"] <= 20  # an explicit "not done" caps it
    assert analysis["loop"] == {
        "test_only": False,
        "question_only": False,
        "unverified_done": [],
        "refused_claim": None,
        "decision": "halt",
        "exit_reason": "max_iterations",
    }
    status = read_json(feature / "status.json")
    assert status["confidence"] == analysis["confidence"]
    assert status["lastSignals"] == ["status_block", "ralph_tags"]


def test_questions_only_iteration_is_counted_and_told(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    asks = plan_agent(tmp_path, {"*": {"say": QUESTION}})

    done = ralph("run", "-n", "1", "--agent-cmd", asks)

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["questionLoops"] == 1
    note = entry_fields(entries(feature)[0])["Note"]
    assert "agent asked questions instead of working (1 in a row)" in note
    assert read_json(feature / ".exit_signals")["question_loops"] == [1]
    analysis = read_json(feature / ".response_analysis")
    assert analysis["loop"]["question_only"] is True
    assert analysis["asking_questions"] is True
    assert "Should I use PostgreSQL or SQLite?" in analysis["questions"]

    # The next run's first prompt tells the agent nobody answers; the count goes on across runs.
    done = ralph("run", "-n", "1", "--agent-cmd", asks)

    assert done.returncode == 1, done.stdout + done.stderr
    prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "Note from ralph: you asked questions last iteration, but nobody answers them during the loop" in prompt
    assert read_json(feature / "status.json")["questionLoops"] == 2
    assert "(2 in a row)" in entry_fields(entries(feature)[1])["Note"]

    # Asking while also changing files is not question-only: the count starts again.
    works = plan_agent(tmp_path, {"*": {"say": QUESTION, "write": {"schema.sql": "create table t (id int);\n"}}})
    done = ralph("run", "-n", "1", "--agent-cmd", works)

    assert done.returncode == 1, done.stdout + done.stderr
    assert read_json(feature / "status.json")["questionLoops"] == 0
    assert "asked questions" not in entries(feature)[2]
    assert (project / "schema.sql").is_file()


def test_awaiting_the_users_input_is_a_question_the_next_prompt_answers(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    waits = plan_agent(
        tmp_path, {"*": {"say": "I wrote both options down.\nAwaiting your input on the design decision.\n"}}
    )

    done = ralph("run", "-n", "2", "--agent-cmd", waits)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Awaiting your input on the design decision." in read_json(feature / ".response_analysis")["questions"]
    prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "Note from ralph: you asked questions last iteration, but nobody answers them during the loop" in prompt
