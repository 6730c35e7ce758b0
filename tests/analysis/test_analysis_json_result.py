"""parse_result: the seed-001 JSON result, read leniently and typed strictly."""

from __future__ import annotations

import json

import pytest

from ralphloop.analysis.json_result import MAX_ITEMS, MAX_TEXT, JsonResult, PendingStep, parse_result


def parsed(value: object) -> JsonResult:
    result, error = parse_result(json.dumps(value))
    assert error is None
    assert result is not None
    return result


def test_a_full_goal_complete_result() -> None:
    result = parsed(
        {
            "status": "goal-complete",
            "summary": "Shipped the exporter",
            "completedStepIds": ["s-1", "s-2"],
            "pendingSteps": [],
            "goalCompleteSummary": "CSV export works",
        }
    )
    assert result == JsonResult(
        status="goal-complete",
        summary="Shipped the exporter",
        completed_step_ids=("s-1", "s-2"),
        pending_steps=(),
        goal_complete_summary="CSV export works",
    )


def test_pending_steps_with_and_without_ids_and_as_bare_strings() -> None:
    result = parsed(
        {
            "status": "continue",
            "pendingSteps": [{"id": None, "prompt": "new step"}, {"id": "s-3", "prompt": "old step"}, "bare"],
        }
    )
    assert result.pending_steps == (
        PendingStep(None, "new step"),
        PendingStep("s-3", "old step"),
        PendingStep(None, "bare"),
    )
    assert result.problems == ()


def test_needs_human_reason_and_details() -> None:
    result = parsed({"status": "needs-human", "humanNeeded": {"reason": "No key", "details": "export KEY=..."}})
    assert (result.status, result.human_reason, result.human_details) == ("needs-human", "No key", "export KEY=...")


@pytest.mark.parametrize("status", ["continue", "goal-complete", "needs-human"])
def test_the_three_statuses(status: str) -> None:
    assert parsed({"status": status}).status == status


@pytest.mark.parametrize("status", ["done", "COMPLETE", "Goal-Complete", None, 3, ["continue"]])
def test_another_status_is_an_error_not_a_result(status: object) -> None:
    result, error = parse_result(json.dumps({"status": status}))
    assert result is None
    assert error is not None
    assert "status" in error


@pytest.mark.parametrize(
    "body", ['{"summary": "x"}', "[1, 2, 3]", '"status"', "42", "null", '[{"status": "continue"}]']
)
def test_json_without_a_status_field_is_not_a_result(body: str) -> None:
    assert parse_result(body) == (None, None)


def test_malformed_json_that_looks_like_a_result_reports_line_and_column() -> None:
    result, error = parse_result('{\n  "status": "continue",\n  "summary": oops\n}')
    assert result is None
    assert error == "malformed JSON result at line 3, column 14: Expecting value"


def test_malformed_json_without_a_status_key_is_not_reported() -> None:
    assert parse_result("{ not json at all") == (None, None)
    assert parse_result("") == (None, None)


def test_wrong_field_types_are_dropped_and_named() -> None:
    result = parsed(
        {
            "status": "continue",
            "summary": 3,
            "completedStepIds": "s-1",
            "pendingSteps": {"id": "x"},
            "goalCompleteSummary": False,
            "humanNeeded": "someone",
        }
    )
    assert result == JsonResult(status="continue", problems=result.problems)
    assert set(result.problems) == {
        "humanNeeded: expected an object",
        "summary: expected a string",
        "completedStepIds: expected a list",
        "pendingSteps: expected a list",
        "goalCompleteSummary: expected a string",
    }


def test_bad_items_are_dropped_and_good_ones_kept() -> None:
    result = parsed(
        {
            "status": "continue",
            "completedStepIds": ["s-1", None, {"id": "s-2"}, True, "s-3"],
            "pendingSteps": [{"id": "a"}, {"prompt": 5}, 7, {"id": "b", "prompt": "keep me"}],
        }
    )
    assert result.completed_step_ids == ("s-1", "s-3")
    assert result.pending_steps == (PendingStep("b", "keep me"),)
    assert "completedStepIds: only strings and numbers are step ids" in result.problems
    assert {problem for problem in result.problems if problem.startswith("pendingSteps")} == {
        "pendingSteps[0]: expected {id, prompt}",
        "pendingSteps[1]: expected {id, prompt}",
        "pendingSteps[2]: expected {id, prompt}",
    }


def test_human_needed_fields_of_the_wrong_type() -> None:
    result = parsed({"status": "needs-human", "humanNeeded": {"reason": ["x"], "details": 1}})
    assert (result.human_reason, result.human_details) == ("", "")
    assert set(result.problems) == {"humanNeeded.reason: expected a string", "humanNeeded.details: expected a string"}


def test_null_fields_are_absent_not_problems() -> None:
    result = parsed(
        {"status": "continue", "summary": None, "completedStepIds": None, "pendingSteps": None, "humanNeeded": None}
    )
    assert result == JsonResult(status="continue")


def test_sizes_are_bounded() -> None:
    result = parsed(
        {
            "status": "continue",
            "summary": "s" * (MAX_TEXT + 50),
            "completedStepIds": [f"id-{i}" for i in range(MAX_ITEMS + 50)],
            "pendingSteps": ["p" * (MAX_TEXT + 1)] * (MAX_ITEMS + 50),
        }
    )
    assert len(result.summary) == MAX_TEXT
    assert len(result.completed_step_ids) == MAX_ITEMS
    assert len(result.pending_steps) == MAX_ITEMS
    assert len(result.pending_steps[0].prompt) == MAX_TEXT


def test_deeply_nested_result_is_an_error_not_a_crash() -> None:
    result, error = parse_result('{"status": "continue", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert result is None
    assert error is not None
    assert error.startswith("malformed JSON result")


def test_deeply_nested_json_without_status_is_not_a_result() -> None:
    assert parse_result("[" * 100_000 + "]" * 100_000) == (None, None)
