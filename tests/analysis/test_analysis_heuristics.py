"""Prose heuristics and the documented confidence table (heuristics.py's docstring): they inform, never decide."""

from __future__ import annotations

import pytest

from ralphloop.analysis.heuristics import HEURISTIC_CHARS, Heuristics, confidence, read_prose
from ralphloop.analysis.signals import analyze


def heuristics(completion: int = 0, nothing: int = 0, questions: int = 0) -> Heuristics:
    return Heuristics(
        tuple(f"c{i}" for i in range(completion)),
        tuple(f"n{i}" for i in range(nothing)),
        tuple(f"q{i}?" for i in range(questions)),
        False,
    )


@pytest.mark.parametrize(
    ("completion", "nothing", "tests_passing", "expected"),
    [
        (0, 0, False, 0),
        (1, 0, False, 10),
        (2, 0, False, 20),
        (3, 0, False, 30),
        (6, 0, False, 30),  # +10 each, at most 30
        (0, 1, False, 15),
        (0, 2, False, 30),
        (0, 4, False, 30),  # +15 each, at most 30
        (1, 1, False, 25),
        (3, 2, False, 60),
        (0, 0, True, 10),  # TESTS_STATUS: PASSING with no explicit claim
        (3, 2, True, 70),
        (6, 4, True, 70),
    ],
)
def test_confidence_table_points(completion: int, nothing: int, tests_passing: bool, expected: int) -> None:
    score = confidence(heuristics(completion, nothing), claimed=False, not_done=False, tests_passing=tests_passing)
    assert score == expected


@pytest.mark.parametrize(("completion", "nothing", "tests_passing"), [(0, 0, False), (3, 2, True), (1, 0, False)])
@pytest.mark.parametrize("not_done", [False, True])
@pytest.mark.parametrize("questions", [0, 3])
def test_an_explicit_claim_is_100_whatever_else(
    completion: int, nothing: int, tests_passing: bool, not_done: bool, questions: int
) -> None:
    found = heuristics(completion, nothing, questions)
    assert confidence(found, claimed=True, not_done=not_done, tests_passing=tests_passing) == 100


@pytest.mark.parametrize(
    ("completion", "nothing", "tests_passing", "expected"),
    [(3, 2, True, 20), (3, 2, False, 20), (1, 0, False, 10), (0, 0, True, 10), (0, 0, False, 0)],
)
def test_not_done_caps_at_20(completion: int, nothing: int, tests_passing: bool, expected: int) -> None:
    assert confidence(heuristics(completion, nothing), claimed=False, not_done=True, tests_passing=tests_passing) == (
        expected
    )


@pytest.mark.parametrize(("completion", "nothing", "expected"), [(3, 2, 20), (2, 0, 20), (1, 0, 10)])
def test_questions_cap_at_20(completion: int, nothing: int, expected: int) -> None:
    found = heuristics(completion, nothing, questions=1)
    assert found.asking_questions
    assert confidence(found, claimed=False, not_done=False, tests_passing=True) == min(expected + 10, 20)
    assert confidence(found, claimed=False, not_done=False, tests_passing=False) == expected


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        ("All tasks are complete.", "all tasks complete"),
        ("All the stories have been completed.", "all tasks complete"),
        ("all items have been finished", "all tasks complete"),
        ("The feature is now fully complete.", "project complete"),
        ("The implementation is finished.", "project complete"),
        ("All user stories now pass.", "all stories pass"),
        ("Everything has been implemented.", "everything is done"),
        ("This is ready for review.", "ready for review"),
        ("Ready to merge.", "ready for review"),
        ("I've completed all of the stories.", "finished"),
    ],
)
def test_completion_phrases(sentence: str, label: str) -> None:
    assert read_prose(sentence).completion_phrases == (label,)


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        ("There is nothing left to do.", "nothing to do"),
        ("Nothing more to implement here.", "nothing to do"),
        ("No remaining tasks.", "no remaining tasks"),
        ("There are no open stories.", "no remaining tasks"),
        ("S-2 was already implemented in the last loop.", "already implemented"),
        ("The test has previously been passing.", "already implemented"),
        ("No further changes are required.", "no changes needed"),
    ],
)
def test_nothing_to_do_phrases(sentence: str, label: str) -> None:
    assert read_prose(sentence).nothing_to_do == (label,)


@pytest.mark.parametrize(
    "sentence",
    ["Implemented the parser.", "The work is incomplete.", "Nothing works yet.", "Tasks completed: 2 of 5."],
)
def test_no_phrase_in_ordinary_progress(sentence: str) -> None:
    found = read_prose(sentence)
    assert (found.completion_phrases, found.nothing_to_do) == ((), ())


def test_a_negated_phrase_still_matches_which_is_why_phrases_never_decide() -> None:
    analysis = analyze("Not all tasks are done yet.")
    assert analysis.heuristics.completion_phrases == ("all tasks complete",)
    assert analysis.completion_claimed is False
    assert analysis.confidence == 10


@pytest.mark.parametrize(
    ("text", "questions"),
    [
        ("Should I also update the docs?", ["Should I also update the docs?"]),
        ("Done. Which database do you prefer?", ["Which database do you prefer?"]),
        ("Could you confirm the API version?", ["Could you confirm the API version?"]),
        ("Please confirm the schema.", ["Please confirm the schema."]),
        ("Let me know whether to proceed.", ["Let me know whether to proceed."]),
        ("Why does this fail? I fixed it.", []),  # a rhetorical question, not addressed to the user
        ("No questions here.", []),
        # a wait for the user's word is an ask too, with or without a question mark
        ("Awaiting your input on the design decision.", ["Awaiting your input on the design decision."]),
        ("Schema drafted. I am awaiting your decision.", ["awaiting your decision."]),
        ("awaiting your confirmation before I drop the table", ["awaiting your confirmation before I drop the table"]),
        ("Stopping here, awaiting your approval!", ["awaiting your approval!"]),
        ("Waiting for your input.", ["Waiting for your input."]),
        ("Two drafts are ready, waiting for your feedback.", ["waiting for your feedback."]),
        ("I’ll wait on your go-ahead to migrate.", ["wait on your go-ahead to migrate."]),
        ("Let me know which option to take.", ["Let me know which option to take."]),
        # status text: a wait for a tool, a build or somebody's review is not an ask
        ("Waiting for tests to finish.", []),
        ("Pushed; awaiting CI.", []),
        ("The PR is awaiting review from the CI bot.", []),
        ("Waiting for your tests to finish before the next step.", []),
        ("The dialog waits for input.", []),
    ],
)
def test_questions_to_the_user(text: str, questions: list[str]) -> None:
    found = read_prose(text)
    assert list(found.questions) == questions
    assert found.asking_questions is bool(questions)


def test_questions_are_bounded() -> None:
    found = read_prose(" ".join(f"Should I do step {i}?" for i in range(50)))
    assert len(found.questions) == 5
    assert found.questions[-1] == "Should I do step 49?"
    long = read_prose("Should you " + "x" * 290 + "?")
    assert all(len(question) <= 200 for question in long.questions)


@pytest.mark.parametrize(
    ("text", "testing_only"),
    [
        ("I ran the tests: 40 passed.", True),
        ("Executed the test suite with pytest.", True),
        ("cargo test is green.", True),
        ("I ran the tests and fixed two failures.", False),
        ("Added the exporter.", False),
        ("Nothing happened.", False),
    ],
)
def test_testing_only(text: str, testing_only: bool) -> None:
    assert read_prose(text).testing_only is testing_only


def test_only_the_tail_of_the_prose_is_read() -> None:
    early = "All tasks are complete. Should I stop?\n" + "filler " * (HEURISTIC_CHARS // 7 + 10)
    found = read_prose(early)
    assert found == Heuristics((), (), (), False)
    late = "filler " * (HEURISTIC_CHARS // 7 + 10) + "All tasks are complete."
    assert read_prose(late).completion_phrases == ("all tasks complete",)


def test_heuristics_never_claim_completion_in_analyze() -> None:
    text = (
        "All tasks are complete. The feature is complete. All stories pass. Everything is done. "
        "Ready for review. I have finished all stories. Nothing left to do. No remaining tasks. "
        "Already implemented. No changes needed.\n"
        "---RALPH_STATUS---\nTESTS_STATUS: PASSING\n---END_RALPH_STATUS---\n"
    )
    analysis = analyze(text)
    assert analysis.completion_claimed is False
    assert analysis.claim_sources == ()
    assert analysis.confidence == 70
    assert analysis.to_json()["confidence"] == 70


def test_phrases_in_a_fenced_block_are_not_read() -> None:
    analysis = analyze("```\nAll tasks are complete. Should I stop?\n```\n")
    assert analysis.heuristics == Heuristics((), (), (), False)
    assert analysis.confidence == 0
