"""The rows the analysis issue added (trust, needs-human, blocked, task file error, gates), the
refusal rule, the consecutive counters, and the docs' copy of the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from ralphloop.analysis.reading import Streaks
from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.decide import ROWS, Action, Observation, decide, refusal

DOCS = Path(__file__).resolve().parents[2] / "docs" / "exit-decision.md"


def base(**changes: object) -> Observation:
    observation = Observation(
        all_done=False,
        open_ids=("S-2",),
        claimed_complete=False,
        interrupted=False,
        iterations_run=1,
        max_iterations=10,
    )
    return replace(observation, **changes)


def table_markdown() -> str:
    """The decision table as docs/exit-decision.md shows it."""
    lines = ["| row | condition | decision |", "|-----|-----------|----------|"]
    lines += [f"| {number} | {row.condition} | {row.outcome} |" for number, row in enumerate(ROWS, start=1)]
    return "\n".join(lines) + "\n"


def test_the_docs_hold_the_same_table_as_the_code() -> None:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"<!-- decision-table:start -->\n(.*?)<!-- decision-table:end -->", text, re.DOTALL)
    assert match is not None
    assert match.group(1) == table_markdown()


def test_the_table_ends_with_a_row_that_always_applies() -> None:
    assert ROWS[-1].outcome == "continue"
    assert all(ROWS[-1].applies(base(**{"iterations_run": run})) for run in range(3))


def test_task_file_error_halts_with_error_but_interrupt_wins() -> None:
    decision = decide(base(task_file_error="prd.json: invalid JSON", all_done=True))
    assert (decision.action, decision.reason) == (Action.HALT, ExitReason.ERROR)
    assert decision.message == "prd.json: invalid JSON"
    assert decide(base(task_file_error="x", interrupted=True)).reason is ExitReason.INTERRUPTED


def test_trust_mode_completes_on_a_claim_with_open_tasks() -> None:
    decision = decide(base(trust=True, claimed_complete=True, claim_sources=("promise",)))
    assert (decision.action, decision.reason) == (Action.COMPLETE, ExitReason.COMPLETE)
    assert "promise" in decision.message and "trust" in decision.message and "1 task(s) still open" in decision.message
    assert decision.refused_claim is None


def test_trust_mode_without_a_claim_continues() -> None:
    assert decide(base(trust=True)).action is Action.CONTINUE


def test_verify_mode_refuses_a_claim_with_open_tasks_and_continues() -> None:
    decision = decide(base(claimed_complete=True, open_ids=("S-2", "S-3")))
    assert decision.action is Action.CONTINUE
    assert decision.refused_claim == "2 task(s) still do not pass: S-2, S-3"


def test_failing_gates_keep_an_all_done_loop_going_and_refuse_the_claim() -> None:
    observation = base(all_done=True, open_ids=(), claimed_complete=True, gate_failures=("tests", "lint"))
    decision = decide(observation)
    assert decision.action is Action.CONTINUE
    assert decision.refused_claim == "quality gates fail: tests, lint"
    assert decide(replace(observation, gate_failures=())).action is Action.COMPLETE


def test_needs_human_halts_with_the_reason() -> None:
    decision = decide(base(needs_human="Database credentials not configured"))
    assert (decision.action, decision.reason) == (Action.HALT, ExitReason.NEEDS_HUMAN)
    assert decision.reason.exit_code == 1
    assert "Database credentials not configured" in decision.message


def test_all_done_wins_over_needs_human_and_blocked() -> None:
    observation = base(all_done=True, open_ids=(), needs_human="why", blocked_streak=5)
    assert decide(observation).reason is ExitReason.COMPLETE


@pytest.mark.parametrize(("streak", "threshold", "halts"), [(2, 3, False), (3, 3, True), (4, 3, True), (1, 1, True)])
def test_blocked_halts_at_the_threshold(streak: int, threshold: int, halts: bool) -> None:
    decision = decide(base(blocked_streak=streak, blocked_threshold=threshold, blocked_reason="no credentials"))
    if halts:
        assert (decision.action, decision.reason) == (Action.HALT, ExitReason.BLOCKED)
        assert decision.reason.exit_code == 1
        assert decision.message.endswith("no credentials")
        assert f"{streak} times in a row" in decision.message
    else:
        assert decision.action is Action.CONTINUE


def test_blocked_wins_over_max_iterations() -> None:
    decision = decide(base(blocked_streak=3, iterations_run=10, max_iterations=10))
    assert decision.reason is ExitReason.BLOCKED


def test_refusal_is_none_without_a_claim_or_with_a_verified_one() -> None:
    assert refusal(base()) is None
    assert refusal(base(claimed_complete=True, all_done=True, open_ids=())) is None
    assert refusal(base(claimed_complete=True, trust=True)) is None


def test_blocked_exit_reason_maps_to_halted_and_exit_1() -> None:
    assert ExitReason.BLOCKED.value == "blocked"
    assert ExitReason.BLOCKED.status == "halted"


# ---------------------------------------------------------------- consecutive counters


def test_streaks_count_consecutive_iterations_only() -> None:
    streaks = Streaks()
    for _ in range(2):
        streaks = streaks.after(counted=True, blocked=True, test_only=True, question_only=False)
    assert streaks == Streaks(blocked=2, test_only=2, question_only=0)
    streaks = streaks.after(counted=True, blocked=False, test_only=True, question_only=True)
    assert streaks == Streaks(blocked=0, test_only=3, question_only=1)


def test_an_uncounted_iteration_leaves_every_streak_alone() -> None:
    streaks = Streaks(blocked=2, test_only=1, question_only=4)
    assert streaks.after(counted=False, blocked=False, test_only=False, question_only=False) == streaks


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40))
def test_blocked_streak_equals_the_trailing_run_of_blocked_iterations(history: list[tuple[bool, bool]]) -> None:
    """(counted, blocked) pairs: the streak is the number of counted blocked iterations since the last
    counted unblocked one."""
    streaks = Streaks()
    for counted, blocked in history:
        streaks = streaks.after(counted=counted, blocked=blocked, test_only=False, question_only=False)
    expected = 0
    for counted, blocked in history:
        if counted:
            expected = expected + 1 if blocked else 0
    assert streaks.blocked == expected


def test_streaks_round_trip_through_state_counts() -> None:
    streaks = Streaks(blocked=2, test_only=0, question_only=1)
    assert streaks.counts() == {"blocked": 2, "test_only": 0, "question_only": 1}
    assert Streaks.from_counts(streaks.counts()) == streaks
    assert Streaks.from_counts({"blocked": 4, "unknown": 9}) == Streaks(blocked=4)
