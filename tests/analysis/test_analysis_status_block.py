"""The RALPH_STATUS block: both forms, seven typed fields, tolerant of markdown, the last block wins."""

from __future__ import annotations

import pytest

from ralphloop.analysis.status_block import MAX_TEXT, StatusBlock, last_block, parse_fields


def only_block(text: str) -> StatusBlock:
    found = last_block(text)
    assert found is not None
    return found[1]


ALL_FIELDS = [
    "STATUS: BLOCKED",
    "TASKS_COMPLETED_THIS_LOOP: 2",
    "FILES_MODIFIED: 11",
    "TESTS_STATUS: FAILING",
    "WORK_TYPE: REFACTORING",
    "EXIT_SIGNAL: false",
    "RECOMMENDATION: Ask for the staging credentials",
]


def test_dashed_form_reads_all_seven_fields_typed() -> None:
    text = "intro\n---RALPH_STATUS---\n" + "\n".join(ALL_FIELDS) + "\n---END_RALPH_STATUS---\noutro\n"
    position, found, _ = last_block(text) or (None, None, None)
    assert position == text.index("---RALPH_STATUS---")
    assert found == StatusBlock(
        status="BLOCKED",
        tasks_completed=2,
        files_modified=11,
        tests_status="FAILING",
        work_type="REFACTORING",
        exit_signal=False,
        recommendation="Ask for the staging credentials",
        closed=True,
        invalid=(),
    )


def test_header_form_reads_the_field_lines_under_it() -> None:
    text = "Summary.\n\nRALPH_STATUS:\n" + "\n".join(ALL_FIELDS) + "\n\nThe end.\n"
    position, found, _ = last_block(text) or (None, None, None)
    assert position == text.index("RALPH_STATUS:")
    assert found is not None
    assert (found.status, found.tasks_completed, found.files_modified) == ("BLOCKED", 2, 11)
    assert (found.tests_status, found.work_type, found.exit_signal) == ("FAILING", "REFACTORING", False)
    assert found.recommendation == "Ask for the staging credentials"


def test_header_form_stops_at_the_first_line_that_is_not_a_field() -> None:
    found = only_block("RALPH_STATUS:\nSTATUS: IN_PROGRESS\nThat is all\nEXIT_SIGNAL: true\n")
    assert found.status == "IN_PROGRESS"
    assert found.exit_signal is None


def test_header_form_skips_blank_lines_before_its_fields() -> None:
    assert only_block("RALPH_STATUS:\n\n\nSTATUS: COMPLETE\n").status == "COMPLETE"


def test_no_block() -> None:
    assert last_block("") is None
    assert last_block("STATUS: COMPLETE\nEXIT_SIGNAL: true\n") is None
    assert last_block("I will print a RALPH_STATUS block at the end.\nSTATUS: COMPLETE\n") is None
    assert last_block("RALPH_STATUS: COMPLETE\n") is None  # a header has nothing after its colon


@pytest.mark.parametrize(
    "line",
    [
        "EXIT_SIGNAL: true",
        "exit_signal: TRUE",
        "Exit Signal: Yes",
        "**EXIT_SIGNAL:** true",
        "**EXIT_SIGNAL**: true",
        "- **EXIT_SIGNAL**: true",
        "* EXIT_SIGNAL: true",
        "  -   EXIT_SIGNAL   :   true  ",
        "`EXIT_SIGNAL: true`",
        "EXIT_SIGNAL: true.",
        "EXIT_SIGNAL: __true__",
        "> EXIT_SIGNAL: y",
        "EXIT_SIGNAL: 1",
    ],
)
def test_exit_signal_true_in_any_markdown_dress(line: str) -> None:
    assert parse_fields([line]).exit_signal is True


@pytest.mark.parametrize("value", ["false", "FALSE", "no", "No", "n", "0"])
def test_exit_signal_false_values(value: str) -> None:
    assert parse_fields([f"EXIT_SIGNAL: {value}"]).exit_signal is False


@pytest.mark.parametrize("value", ["maybe", "true | false", "false | true", "<bool>", "true (all done)"])
def test_exit_signal_other_values_are_invalid(value: str) -> None:
    found = parse_fields([f"EXIT_SIGNAL: {value}"])
    assert found.exit_signal is None
    assert found.invalid == (f"EXIT_SIGNAL: {value}",)


@pytest.mark.parametrize("key", ["STATUS", "EXIT_SIGNAL", "TESTS_STATUS", "FILES_MODIFIED", "WORK_TYPE"])
def test_an_empty_value_is_invalid(key: str) -> None:
    found = parse_fields([f"{key}:"])
    assert found == StatusBlock(invalid=found.invalid)
    assert len(found.invalid) == 1
    assert found.invalid[0].startswith(f"{key}:")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("IN_PROGRESS", "IN_PROGRESS"),
        ("in progress", "IN_PROGRESS"),
        ("In-Progress", "IN_PROGRESS"),
        ("complete", "COMPLETE"),
        ("**COMPLETE**", "COMPLETE"),
        ("Blocked", "BLOCKED"),
    ],
)
def test_status_values(value: str, expected: str) -> None:
    assert parse_fields([f"STATUS: {value}"]).status == expected


@pytest.mark.parametrize("value", ["IN_PROGRESS | COMPLETE | BLOCKED", "DONE", "COMPLETED", "<status>", "COMPLETE!"])
def test_status_template_or_unknown_values_are_invalid(value: str) -> None:
    found = parse_fields([f"STATUS: {value}"])
    assert found.status is None
    assert found.invalid == (f"STATUS: {value}",)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("PASSING", "PASSING"), ("failing", "FAILING"), ("not run", "NOT_RUN"), ("Not-Run", "NOT_RUN")],
)
def test_tests_status_values(value: str, expected: str) -> None:
    assert parse_fields([f"TESTS_STATUS: {value}"]).tests_status == expected


def test_tests_status_is_never_read_as_status() -> None:
    found = parse_fields(["TESTS_STATUS: PASSING", "tests status: PASSING", "**Tests_Status**: PASSING"])
    assert found.status is None
    assert found.tests_status == "PASSING"
    assert found.invalid == ()


def test_tests_status_before_status_keeps_both() -> None:
    found = parse_fields(["TESTS_STATUS: FAILING", "STATUS: IN_PROGRESS"])
    assert (found.status, found.tests_status) == ("IN_PROGRESS", "FAILING")


def test_status_complete_is_not_a_tests_status() -> None:
    found = parse_fields(["TESTS_STATUS: COMPLETE"])
    assert found.tests_status is None
    assert found.invalid == ("TESTS_STATUS: COMPLETE",)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("TASKS_COMPLETED_THIS_LOOP: 3", 3),
        ("Tasks Completed This Loop: 0", 0),
        ("tasks_completed_this_loop: 12 (S-1, S-2)", 12),
        ("TASKS_COMPLETED: 4", 4),
        ("**TASKS_COMPLETED_THIS_LOOP**: 5", 5),
    ],
)
def test_tasks_completed_is_an_int(line: str, expected: int) -> None:
    assert parse_fields([line]).tasks_completed == expected


@pytest.mark.parametrize("value", ["<number>", "-1", "many", "three"])
def test_files_modified_must_be_a_number(value: str) -> None:
    found = parse_fields([f"FILES_MODIFIED: {value}"])
    assert found.files_modified is None
    assert found.invalid == (f"FILES_MODIFIED: {value}",)


def test_work_type_is_an_upper_word() -> None:
    assert parse_fields(["WORK_TYPE: implementation"]).work_type == "IMPLEMENTATION"
    assert parse_fields(["WORK_TYPE: bug fix"]).work_type == "BUG_FIX"
    assert parse_fields(["WORK_TYPE: IMPLEMENTATION | TESTING"]).work_type is None
    assert parse_fields(["WORK_TYPE: 42"]).work_type is None


def test_recommendation_is_free_text_cut_to_a_bound() -> None:
    assert parse_fields(["RECOMMENDATION: Fix the flaky test, then S-4"]).recommendation == (
        "Fix the flaky test, then S-4"
    )
    long = parse_fields(["RECOMMENDATION: " + "x" * 700]).recommendation
    assert long is not None
    assert len(long) == MAX_TEXT
    assert parse_fields(["RECOMMENDATION:"]).recommendation is None


def test_unknown_keys_and_non_field_lines_are_ignored() -> None:
    found = parse_fields(["NOTES: whatever", "just a sentence", "", "STATUS: COMPLETE", "ETA: soon"])
    assert found == StatusBlock(status="COMPLETE")


def test_a_later_line_of_the_same_field_wins_within_a_block() -> None:
    assert parse_fields(["STATUS: IN_PROGRESS", "STATUS: COMPLETE"]).status == "COMPLETE"


def test_an_invalid_later_line_keeps_the_earlier_valid_value() -> None:
    found = parse_fields(["STATUS: IN_PROGRESS", "STATUS: <status>"])
    assert found.status == "IN_PROGRESS"
    assert found.invalid == ("STATUS: <status>",)


def test_last_block_wins_whole_not_merged() -> None:
    text = (
        "---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nFILES_MODIFIED: 3\n---END_RALPH_STATUS---\n"
        "later\n"
        "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n---END_RALPH_STATUS---\n"
    )
    position, found, _ = last_block(text) or (None, None, None)
    assert position == text.rindex("---RALPH_STATUS---")
    assert found == StatusBlock(status="IN_PROGRESS")


def test_last_block_wins_across_forms() -> None:
    dashed_then_header = (
        "---RALPH_STATUS---\nSTATUS: COMPLETE\n---END_RALPH_STATUS---\n\nRALPH_STATUS:\nSTATUS: BLOCKED\n"
    )
    assert only_block(dashed_then_header).status == "BLOCKED"
    header_then_dashed = (
        "RALPH_STATUS:\nSTATUS: BLOCKED\n\n---RALPH_STATUS---\nSTATUS: COMPLETE\n---END_RALPH_STATUS---\n"
    )
    assert only_block(header_then_dashed).status == "COMPLETE"


def test_unclosed_block_is_read_and_marked() -> None:
    found = only_block("---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nFILES_MODI")
    assert (found.status, found.exit_signal, found.closed) == ("COMPLETE", True, False)
    assert only_block("---RALPH_STATUS---\nSTATUS: COMPLETE\n---END_RALPH_STATUS---").closed is True


def test_a_new_start_line_after_an_unclosed_block_starts_the_last_block() -> None:
    found = only_block("---RALPH_STATUS---\nSTATUS: COMPLETE\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n")
    assert found.status == "IN_PROGRESS"


@pytest.mark.parametrize(
    "start",
    [
        "---RALPH_STATUS---",
        "--- RALPH_STATUS ---",
        "-----RALPH_STATUS-----",
        "  ---ralph_status---",
        "**---RALPH_STATUS---**",
    ],
)
def test_start_marker_variants(start: str) -> None:
    assert only_block(f"{start}\nSTATUS: BLOCKED\n---END_RALPH_STATUS---\n").status == "BLOCKED"


@pytest.mark.parametrize(
    "header", ["RALPH_STATUS:", "**RALPH_STATUS:**", "**RALPH_STATUS**:", "## RALPH_STATUS:", "Ralph_Status:"]
)
def test_header_variants(header: str) -> None:
    assert only_block(f"{header}\nSTATUS: BLOCKED\n").status == "BLOCKED"


def test_marker_inside_a_sentence_is_not_a_block() -> None:
    assert last_block("Print ---RALPH_STATUS--- then the fields\nSTATUS: COMPLETE\n") is None


def test_crlf_lines_are_tolerated_by_parse_fields() -> None:
    assert parse_fields(["STATUS: COMPLETE\r", "EXIT_SIGNAL: true\r"]) == StatusBlock(
        status="COMPLETE", exit_signal=True
    )


def test_a_very_long_field_line_is_cut_not_matched_slowly() -> None:
    found = parse_fields(["STATUS: " + "COMPLETE " * 100_000, "-" * 200_000 + ":", "*" * 200_000])
    assert found.status is None
    assert len(found.invalid) == 1
    assert len(found.invalid[0]) <= 100
