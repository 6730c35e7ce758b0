"""decide(): every row of the decision table, first match wins, refused claims in every row."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.decide import Action, Decision, Observation, decide


def obs(
    *,
    all_done: bool = False,
    open_ids: tuple[str, ...] = ("S-2", "S-3"),
    claimed: bool = False,
    interrupted: bool = False,
    run: int = 1,
    max_iterations: int | None = 10,
) -> Observation:
    if all_done:
        open_ids = ()
    return Observation(
        all_done=all_done,
        open_ids=open_ids,
        claimed_complete=claimed,
        interrupted=interrupted,
        iterations_run=run,
        max_iterations=max_iterations,
    )


# ---------------------------------------------------------------- row 1: interrupted


def test_row1_interrupted_halts_with_130() -> None:
    decision = decide(obs(interrupted=True))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.INTERRUPTED
    assert decision.reason.exit_code == 130
    assert decision.refused_claim is None


def test_row1_interrupted_wins_over_all_done() -> None:
    decision = decide(obs(interrupted=True, all_done=True))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.INTERRUPTED


def test_row1_interrupted_wins_over_max_iterations() -> None:
    decision = decide(obs(interrupted=True, run=10, max_iterations=10))
    assert decision.reason is ExitReason.INTERRUPTED


def test_row1_interrupted_with_a_false_claim_records_the_refusal() -> None:
    decision = decide(obs(interrupted=True, claimed=True, open_ids=("S-2",)))
    assert decision.reason is ExitReason.INTERRUPTED
    assert decision.refused_claim is not None
    assert "S-2" in decision.refused_claim


# ---------------------------------------------------------------- row 2: every task done


@pytest.mark.parametrize("claimed", [True, False])
def test_row2_all_done_completes_with_or_without_promise(claimed: bool) -> None:
    decision = decide(obs(all_done=True, claimed=claimed))
    assert decision.action is Action.COMPLETE
    assert decision.reason is ExitReason.COMPLETE
    assert decision.reason.exit_code == 0
    assert decision.refused_claim is None


def test_row2_all_done_wins_over_max_iterations() -> None:
    decision = decide(obs(all_done=True, run=5, max_iterations=5))
    assert decision.action is Action.COMPLETE


# ---------------------------------------------------------------- row 3: max iterations


@pytest.mark.parametrize(("run", "limit"), [(5, 5), (6, 5), (1, 1)])
def test_row3_max_iterations_reached_halts_with_1(run: int, limit: int) -> None:
    decision = decide(obs(run=run, max_iterations=limit, open_ids=("S-2", "S-3")))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.MAX_ITERATIONS
    assert decision.reason.exit_code == 1
    assert str(limit) in decision.message
    assert "2 task(s) open" in decision.message
    assert decision.refused_claim is None


def test_row3_false_claim_at_the_limit_is_refused_and_still_halts() -> None:
    decision = decide(obs(run=3, max_iterations=3, claimed=True, open_ids=("S-9",)))
    assert decision.action is Action.HALT
    assert decision.reason is ExitReason.MAX_ITERATIONS
    assert decision.refused_claim is not None
    assert "S-9" in decision.refused_claim


# ---------------------------------------------------------------- row 4: otherwise


def test_row4_below_the_limit_continues() -> None:
    assert decide(obs(run=4, max_iterations=5)) == Decision(Action.CONTINUE, None, "", None)


def test_row4_unlimited_never_halts_for_iterations() -> None:
    decision = decide(obs(run=10**6, max_iterations=None))
    assert decision.action is Action.CONTINUE
    assert decision.reason is None


def test_row4_false_claim_is_refused_and_the_loop_continues() -> None:
    decision = decide(obs(claimed=True, open_ids=("S-2", "S-3")))
    assert decision.action is Action.CONTINUE
    assert decision.refused_claim == "2 task(s) still do not pass: S-2, S-3"


# ---------------------------------------------------------------- the whole table


@given(
    all_done=st.booleans(),
    claimed=st.booleans(),
    interrupted=st.booleans(),
    run=st.integers(0, 50),
    limit=st.none() | st.integers(1, 50),
    open_ids=st.lists(st.text("ABC-123", min_size=1, max_size=5), min_size=1, max_size=4, unique=True),
)
def test_table_first_matching_row_wins(
    all_done: bool, claimed: bool, interrupted: bool, run: int, limit: int | None, open_ids: list[str]
) -> None:
    decision = decide(
        obs(
            all_done=all_done,
            claimed=claimed,
            interrupted=interrupted,
            run=run,
            max_iterations=limit,
            open_ids=tuple(open_ids),
        )
    )
    if interrupted:
        expected = (Action.HALT, ExitReason.INTERRUPTED)
    elif all_done:
        expected = (Action.COMPLETE, ExitReason.COMPLETE)
    elif limit is not None and run >= limit:
        expected = (Action.HALT, ExitReason.MAX_ITERATIONS)
    else:
        expected = (Action.CONTINUE, None)
    assert (decision.action, decision.reason) == expected
    refused = claimed and not all_done
    assert (decision.refused_claim is not None) == refused
    if refused:
        assert decision.refused_claim is not None
        assert all(task_id in decision.refused_claim for task_id in open_ids)
