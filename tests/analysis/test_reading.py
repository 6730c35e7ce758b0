"""reading.py: what an analysis means once checked against the task file and the changed files."""

from __future__ import annotations

import pytest

from ralphloop.analysis.reading import Streaks, is_test_path, iteration_notes, next_prompt_notes, read_iteration
from ralphloop.analysis.signals import analyze
from ralphloop.core.protocols import Task, TaskView
from ralphloop.engine.decide import Action, Decision

S1 = Task("S-1", "First", done=True)
S2 = Task("S-2", "Second", done=False)
VIEW = TaskView((S1, S2), S2)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_slug.py",
        "test/a.js",
        "pkg/__tests__/x.ts",
        "test_x.py",
        "src/a_test.go",
        "web/app.test.ts",
        "a.spec.js",
    ],
)
def test_test_paths(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize("path", ["src/slug.py", "README.md", "contest/x.py", "src/testing_utils.py", "latest.txt"])
def test_other_paths(path: str) -> None:
    assert not is_test_path(path)


def test_test_only_needs_only_test_files_changed() -> None:
    analysis = analyze("I ran the tests again: pytest reports 12 passed.")
    assert analysis.test_only
    assert read_iteration(analysis, S2, VIEW, ["tests/test_a.py"]).test_only
    assert read_iteration(analysis, S2, VIEW, []).test_only
    assert not read_iteration(analysis, S2, VIEW, ["src/a.py"]).test_only


def test_question_only_needs_no_changes_and_no_claim() -> None:
    asking = analyze("Should I use PostgreSQL or SQLite? Let me know which you prefer.")
    assert read_iteration(asking, S2, VIEW, []).question_only
    assert not read_iteration(asking, S2, VIEW, ["src/db.py"]).question_only
    claiming = analyze("Would you like more? <promise>COMPLETE</promise>")
    assert not read_iteration(claiming, S2, VIEW, []).question_only


def test_done_ids_are_checked_against_the_task_file() -> None:
    analysis = analyze("<ralph>DONE S-2</ralph> <ralph>DONE S-1</ralph> <ralph>DONE S-9</ralph>")
    reading = read_iteration(analysis, S2, VIEW, ["src/a.py"])
    assert reading.unverified_done == ("S-2",)  # S-1 passes; S-9 is not a task
    assert reading.mismatched_done == ("S-1", "S-9")


def test_an_invalid_task_file_verifies_nothing() -> None:
    reading = read_iteration(analyze("<ralph>DONE S-1</ralph>"), S1, VIEW, [], view_valid=False)
    assert reading.unverified_done == ("S-1",)


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        ("<ralph>FAIL S-2: tests fail</ralph>", True),
        ("<ralph>FAIL S-1: other story</ralph>", False),
        ("[FAIL]", True),
        ("<ralph>DONE S-2</ralph>", False),
    ],
)
def test_failed_here(text: str, failed: bool) -> None:
    assert read_iteration(analyze(text), S2, VIEW, []).failed_here is failed


def test_notes_name_every_finding() -> None:
    analysis = analyze(
        "<ralph>DONE S-2</ralph>\n<ralph>FAIL S-2: flaky db</ralph>\n"
        "---RALPH_STATUS---\nSTATUS: BLOCKED\nRECOMMENDATION: need DB creds\n---END_RALPH_STATUS---\n"
        '```json\n{"status": "continue", "summary": 3}\n```\n'
    )
    reading = read_iteration(analysis, S2, VIEW, [])
    notes = iteration_notes(analysis, reading, Streaks(blocked=2), "1 task(s) still do not pass: S-2", 3)
    text = "\n".join(notes)
    assert "agent signalled DONE S-2, but it does not pass in the task file" in text
    assert "agent signalled FAIL S-2: flaky db" in text
    assert "agent reports BLOCKED (2/3 in a row): need DB creds" in text
    assert "completion claim refused: 1 task(s) still do not pass: S-2" in text


def test_next_prompt_tells_the_agent_what_still_fails() -> None:
    analysis = analyze("<promise>COMPLETE</promise> <ralph>DONE S-2</ralph> Should I also add docs?")
    reading = read_iteration(analysis, S2, VIEW, [])
    decision = Decision(Action.CONTINUE, refused_claim="1 task(s) still do not pass: S-2")
    notes = next_prompt_notes(analysis, reading, decision.refused_claim, 3)
    assert any("your last completion claim was refused: 1 task(s) still do not pass: S-2" in note for note in notes)
    assert any("you signalled DONE S-2, but S-2 still does not pass" in note for note in notes)
    assert not any("nobody answers" in note for note in notes)  # it claimed completion: not question-only


def test_next_prompt_after_awaiting_the_users_input() -> None:
    waiting = analyze("I drafted two schemas in the progress log. Awaiting your input on the design decision.")
    reading = read_iteration(waiting, S2, VIEW, [])
    assert reading.question_only
    notes = next_prompt_notes(waiting, reading, None, 3)
    assert any("nobody answers them during the loop" in note for note in notes)
    status = analyze("Pushed the branch; awaiting CI. Waiting for tests to finish.")
    assert not any(
        "nobody answers" in note for note in next_prompt_notes(status, read_iteration(status, S2, VIEW, []), None, 3)
    )


def test_next_prompt_after_questions_and_blocked() -> None:
    asking = analyze("Which database do you prefer?")
    notes = next_prompt_notes(asking, read_iteration(asking, S2, VIEW, []), None, 3)
    assert any("nobody answers them during the loop" in note for note in notes)
    blocked = analyze("---RALPH_STATUS---\nSTATUS: BLOCKED\nRECOMMENDATION: no creds\n---END_RALPH_STATUS---")
    notes = next_prompt_notes(blocked, read_iteration(blocked, S2, VIEW, []), None, 4)
    assert any("you reported BLOCKED last iteration (no creds)" in note and "after 4" in note for note in notes)


def test_a_quiet_iteration_has_no_notes() -> None:
    analysis = analyze("Implemented the slug helper and committed it.")
    reading = read_iteration(analysis, S2, VIEW, ["src/slug.py"])
    assert iteration_notes(analysis, reading, Streaks(), None, 3) == []
    assert next_prompt_notes(analysis, reading, None, 3) == []
