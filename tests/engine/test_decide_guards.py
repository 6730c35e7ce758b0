"""decide(): the guard rows (usage limits, model mismatch, circuit breaker, retries, budgets, pauses)
and where they stand in the table's order."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.decide import Action, Observation, decide


def base(**changes: object) -> Observation:
    observation = Observation(
        all_done=False,
        open_ids=("S-2", "S-3"),
        claimed_complete=False,
        interrupted=False,
        iterations_run=1,
        max_iterations=10,
    )
    return replace(observation, **changes)


# Every guard at once: each precedence test takes the rows above the one it checks away.
EVERYTHING: dict[str, object] = {
    "usage_limit": "5-hour limit reached, resets 3pm",
    "usage_action": "exit",
    "usage_wait_s": 900.0,
    "model_mismatch": "got sonnet instead of opus",
    "model_retry": 11,
    "model_retries": 10,
    "needs_human": "which database?",
    "blocked_streak": 3,
    "blocked_reason": "no credentials",
    "circuit_open": "no progress in 3 iterations in a row",
    "task_failed": "tests fail",
    "attempt": 3,
    "max_retries": 3,
    "budget_exceeded": "cost budget reached: $5.00 of max_cost_usd $5.00",
    "iterations_run": 10,
    "max_iterations": 10,
    "pause_s": 120.0,
}


def test_nothing_wrong_continues() -> None:
    decision = decide(base())
    assert decision.action is Action.CONTINUE
    assert decision.reason is None
    assert decision.wait_s == 0.0


# ---------------------------------------------------------------- usage limits


def test_usage_limit_with_exit_halts_with_exit_code_2() -> None:
    decision = decide(base(usage_limit="weekly limit reached", usage_action="exit", usage_wait_s=3600.0))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.USAGE_LIMIT
    assert decision.reason.exit_code == 2
    assert decision.message == "usage limit: weekly limit reached"


def test_usage_limit_with_wait_waits_the_given_time() -> None:
    decision = decide(base(usage_limit="5-hour limit reached", usage_action="wait", usage_wait_s=1234.5))
    assert decision.action is Action.WAIT
    assert decision.reason is None
    assert decision.wait_s == 1234.5
    assert "5-hour limit reached" in decision.message


def test_usage_limit_wait_is_the_default_policy() -> None:
    assert decide(base(usage_limit="limit", usage_wait_s=60.0)).action is Action.WAIT


def test_a_usage_limit_wait_is_not_a_failure_retry_or_circuit_halt() -> None:
    decision = decide(
        base(usage_limit="limit", usage_wait_s=60.0, task_failed="crash", attempt=3, circuit_open="x", pause_s=5.0)
    )
    assert (decision.action, decision.wait_s) == (Action.WAIT, 60.0)


def test_usage_limit_exit_wins_over_usage_wait_and_model_mismatch() -> None:
    decision = decide(base(usage_limit="limit", usage_action="exit", model_mismatch="got haiku", model_retry=1))
    assert decision.reason is ExitReason.USAGE_LIMIT


# ---------------------------------------------------------------- model mismatch


@pytest.mark.parametrize("retry", [1, 5, 10])
def test_model_mismatch_retries_after_the_backoff(retry: int) -> None:
    decision = decide(base(model_mismatch="got sonnet instead of opus", model_retry=retry, model_wait_s=40.0))
    assert decision.action is Action.RETRY
    assert decision.reason is None
    assert decision.wait_s == 40.0
    assert "got sonnet instead of opus" in decision.message
    assert f"attempt {retry}/10" in decision.message
    assert "40s" in decision.message


def test_model_mismatch_with_the_retries_used_up_halts() -> None:
    decision = decide(base(model_mismatch="got sonnet instead of opus", model_retry=11, model_retries=10))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.MODEL_MISMATCH
    assert decision.reason.exit_code == 1
    assert "got sonnet instead of opus after 10 retries" in decision.message
    assert "--poorman" in decision.message


def test_model_mismatch_honours_a_configured_retry_count() -> None:
    assert decide(base(model_mismatch="m", model_retry=2, model_retries=2)).action is Action.RETRY
    assert decide(base(model_mismatch="m", model_retry=3, model_retries=2)).reason is ExitReason.MODEL_MISMATCH


def test_a_model_mismatch_retry_wins_over_a_failed_task_and_the_circuit() -> None:
    decision = decide(base(model_mismatch="m", model_retry=1, task_failed="boom", attempt=3, circuit_open="x"))
    assert decision.action is Action.RETRY
    assert decision.reason is None


# ---------------------------------------------------------------- the circuit breaker


def test_circuit_open_halts() -> None:
    decision = decide(base(circuit_open="the same error in 5 iterations in a row: E"))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.CIRCUIT_OPEN
    assert decision.reason.exit_code == 1
    assert decision.reason.status == "circuit_open"
    assert decision.message == "circuit breaker open: the same error in 5 iterations in a row: E"


def test_circuit_open_with_a_cooldown_continues_to_cool_down() -> None:
    decision = decide(base(circuit_open="no progress in 3 iterations in a row", circuit_cooldown_s=1800.0))
    assert decision.action is Action.CONTINUE
    assert decision.reason is None
    assert "cooling down" in decision.message
    assert "no progress in 3 iterations in a row" in decision.message


def test_a_cooldown_alone_changes_nothing() -> None:
    assert decide(base(circuit_cooldown_s=60.0)).action is Action.CONTINUE


def test_circuit_open_wins_over_a_failed_task_budget_and_max_iterations() -> None:
    decision = decide(
        base(circuit_open="x", task_failed="boom", attempt=3, budget_exceeded="b", iterations_run=10, pause_s=1.0)
    )
    assert decision.reason is ExitReason.CIRCUIT_OPEN


# ---------------------------------------------------------------- task retries


@pytest.mark.parametrize(("attempt", "max_retries"), [(1, 3), (2, 3), (4, 5)])
def test_a_failed_task_with_attempts_left_is_retried(attempt: int, max_retries: int) -> None:
    decision = decide(base(task_failed="pytest: 2 failed", attempt=attempt, max_retries=max_retries))
    assert decision.action is Action.RETRY
    assert decision.reason is None
    assert decision.wait_s == 0.0
    assert f"attempt {attempt}/{max_retries} failed: pytest: 2 failed" in decision.message


@pytest.mark.parametrize(("attempt", "max_retries"), [(3, 3), (1, 1), (4, 3)])
def test_the_last_failed_attempt_halts_retries_exhausted(attempt: int, max_retries: int) -> None:
    decision = decide(base(task_failed="pytest: 2 failed", attempt=attempt, max_retries=max_retries))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.RETRIES_EXHAUSTED
    assert decision.reason.exit_code == 1
    assert "MAX RETRIES EXCEEDED" in decision.message
    assert f"attempt {attempt}/{max_retries}" in decision.message
    assert "pytest: 2 failed" in decision.message


def test_an_attempt_count_without_a_failure_continues() -> None:
    assert decide(base(attempt=3, max_retries=3)).action is Action.CONTINUE


def test_retries_exhausted_wins_over_budget_and_max_iterations() -> None:
    decision = decide(base(task_failed="x", attempt=3, budget_exceeded="b", iterations_run=10))
    assert decision.reason is ExitReason.RETRIES_EXHAUSTED


# ---------------------------------------------------------------- budget and pause


def test_budget_used_up_halts_with_its_sentence() -> None:
    decision = decide(base(budget_exceeded="token budget reached: 1,000 of max_tokens 1,000"))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.BUDGET
    assert decision.reason.exit_code == 1
    assert decision.message == "token budget reached: 1,000 of max_tokens 1,000"


def test_budget_wins_over_max_iterations_and_a_retry() -> None:
    decision = decide(base(budget_exceeded="b", iterations_run=10, task_failed="x", attempt=1))
    assert decision.reason is ExitReason.BUDGET


def test_near_the_usage_limit_it_pauses() -> None:
    decision = decide(base(pause_s=750.0))
    assert decision.action is Action.WAIT
    assert decision.reason is None
    assert decision.wait_s == 750.0
    assert "near the usage limit" in decision.message


def test_a_retry_wins_over_a_pause() -> None:
    decision = decide(base(task_failed="x", attempt=1, pause_s=10.0))
    assert decision.action is Action.RETRY


def test_max_iterations_wins_over_a_pause() -> None:
    assert decide(base(iterations_run=10, pause_s=10.0)).reason is ExitReason.MAX_ITERATIONS


# ---------------------------------------------------------------- precedence


def test_interrupted_wins_over_everything() -> None:
    decision = decide(base(**EVERYTHING, interrupted=True, all_done=True, open_ids=(), task_file_error="bad"))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.INTERRUPTED


def test_all_done_wins_over_a_failed_task_and_every_guard() -> None:
    decision = decide(base(**EVERYTHING, all_done=True, open_ids=()))
    assert decision.action is Action.COMPLETE
    assert decision.reason is ExitReason.COMPLETE


def test_all_done_wins_over_a_failed_task() -> None:
    decision = decide(base(all_done=True, open_ids=(), task_failed="the last test run failed", attempt=3))
    assert decision.action is Action.COMPLETE


def test_max_iterations_wins_over_a_retry() -> None:
    decision = decide(base(iterations_run=10, max_iterations=10, task_failed="boom", attempt=1, max_retries=3))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.MAX_ITERATIONS


def test_blocked_wins_over_circuit_open() -> None:
    decision = decide(base(blocked_streak=3, blocked_reason="needs an API key", circuit_open="no progress"))
    assert decision.reason is ExitReason.BLOCKED


def test_needs_human_wins_over_circuit_open_and_retries() -> None:
    decision = decide(base(needs_human="which db?", circuit_open="x", task_failed="y", attempt=3))
    assert decision.reason is ExitReason.NEEDS_HUMAN


@pytest.mark.parametrize(
    ("removed", "expected"),
    [
        ((), ExitReason.USAGE_LIMIT),
        (("usage_limit",), ExitReason.MODEL_MISMATCH),
        (("usage_limit", "model_mismatch"), ExitReason.NEEDS_HUMAN),
        (("usage_limit", "model_mismatch", "needs_human"), ExitReason.BLOCKED),
        (("usage_limit", "model_mismatch", "needs_human", "blocked_streak"), ExitReason.CIRCUIT_OPEN),
        (
            ("usage_limit", "model_mismatch", "needs_human", "blocked_streak", "circuit_open"),
            ExitReason.RETRIES_EXHAUSTED,
        ),
        (
            ("usage_limit", "model_mismatch", "needs_human", "blocked_streak", "circuit_open", "task_failed"),
            ExitReason.BUDGET,
        ),
        (
            (
                "usage_limit",
                "model_mismatch",
                "needs_human",
                "blocked_streak",
                "circuit_open",
                "task_failed",
                "budget_exceeded",
            ),
            ExitReason.MAX_ITERATIONS,
        ),
    ],
)
def test_the_halting_guards_in_table_order(removed: tuple[str, ...], expected: ExitReason) -> None:
    cleared = {"usage_limit": None, "model_mismatch": None, "needs_human": None, "blocked_streak": 0}
    cleared |= {"circuit_open": None, "task_failed": None, "budget_exceeded": None}
    decision = decide(base(**{**EVERYTHING, **{name: cleared[name] for name in removed}}))
    assert decision.action is Action.HALT
    assert decision.reason is expected


def test_a_false_claim_is_refused_whatever_guard_decides() -> None:
    for changes in (
        {"usage_limit": "l", "usage_wait_s": 5.0},
        {"model_mismatch": "m", "model_retry": 1},
        {"circuit_open": "c"},
        {"task_failed": "t", "attempt": 1},
        {"budget_exceeded": "b"},
        {"pause_s": 3.0},
    ):
        decision = decide(base(claimed_complete=True, claim_sources=("promise",), **changes))
        assert decision.refused_claim is not None
        assert "S-2" in decision.refused_claim
