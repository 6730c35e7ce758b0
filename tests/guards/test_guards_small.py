"""guards/backoff.py and guards/budget.py: the backoff table, model names, and run budgets."""

from __future__ import annotations

import pytest

from ralphloop.guards.backoff import Backoff, model_matches
from ralphloop.guards.budget import Budget, Spent, exceeded

# ---------------------------------------------------------------- Backoff (seed 004's table)


def test_backoff_delays_follow_the_seed_table() -> None:
    backoff = Backoff()
    delays = [backoff.delay(attempt) for attempt in range(1, 11)]
    assert delays == [5, 10, 20, 40, 80, 160, 320, 600, 600, 600]
    assert all(isinstance(delay, float) for delay in delays)


def test_backoff_is_exhausted_after_ten_attempts() -> None:
    backoff = Backoff()
    assert not any(backoff.exhausted(attempt) for attempt in range(1, 11))
    assert backoff.exhausted(11)
    assert backoff.exhausted(50)


def test_backoff_stays_at_the_cap_for_huge_attempts() -> None:
    assert Backoff().delay(10**6) == 600.0


@pytest.mark.parametrize("attempt", [0, -1])
def test_backoff_attempts_count_from_one(attempt: int) -> None:
    with pytest.raises(ValueError):
        Backoff().delay(attempt)


def test_backoff_with_other_settings() -> None:
    backoff = Backoff(initial_s=1.0, cap_s=10.0, attempts=3)
    assert [backoff.delay(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert (backoff.exhausted(3), backoff.exhausted(4)) == (False, True)


# ---------------------------------------------------------------- model_matches


REAL_IDS = {
    "opus": ["claude-opus-4-5-20251101", "claude-opus-4-1[1m]", "claude-opus-4-1-20250805"],
    "sonnet": ["claude-sonnet-4-5-20250929", "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219"],
    "haiku": ["claude-3-5-haiku-20241022", "claude-haiku-4-5-20251001"],
}


@pytest.mark.parametrize(("alias", "used"), [(alias, used) for alias, ids in REAL_IDS.items() for used in ids])
def test_an_alias_matches_every_model_of_its_family(alias: str, used: str) -> None:
    assert model_matches(alias, used)
    assert model_matches(alias.upper(), f"  {used.upper()} ")  # case and spaces do not matter


@pytest.mark.parametrize(
    ("alias", "used"),
    [(alias, used) for alias in REAL_IDS for family, ids in REAL_IDS.items() if family != alias for used in ids],
)
def test_an_alias_does_not_match_another_family(alias: str, used: str) -> None:
    assert not model_matches(alias, used)


@pytest.mark.parametrize(
    ("requested", "used"),
    [
        ("claude-opus-4-5-20251101", "claude-opus-4-5-20251101"),
        ("claude-opus-4-5", "claude-opus-4-5-20251101"),
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-3-5-haiku", "claude-3-5-haiku-20241022"),
        ("claude-opus-4-1", "claude-opus-4-1[1m]"),
        ("Claude-Opus-4-5", "claude-opus-4-5-20251101"),
    ],
)
def test_a_full_name_matches_itself_with_or_without_a_date(requested: str, used: str) -> None:
    assert model_matches(requested, used)


@pytest.mark.parametrize(
    ("requested", "used"),
    [
        ("claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929"),
        ("claude-opus-4-5", "claude-opus-4-1-20250805"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),  # a dated name asks for that exact snapshot
        ("claude-opus-4-5", "claude-opus-4-50"),
        ("claude-sonnet-4-5", "claude-3-5-haiku-20241022"),
        ("opus", "claude-opusx-1"),
        ("sonnet", "gpt-4o"),
        ("opus", ""),
        ("", "claude-opus-4-5-20251101"),
        ("  ", "  "),
    ],
)
def test_mismatches(requested: str, used: str) -> None:
    assert not model_matches(requested, used)


@pytest.mark.parametrize(
    ("requested", "used"),
    [
        ("claude-sonnet-4", "claude-sonnet-4-5-20250929"),
        ("claude-opus-4", "claude-opus-4-1-20250805"),
        ("claude-opus-4", "claude-opus-4-5-20251101"),
    ],
)
def test_a_shorter_version_does_not_match_a_newer_model(requested: str, used: str) -> None:
    assert not model_matches(requested, used)


def test_a_shorter_version_matches_its_own_dated_snapshot() -> None:
    assert model_matches("claude-sonnet-4", "claude-sonnet-4-20250514")
    assert model_matches("claude-opus-4", "claude-opus-4-20250514")


# ---------------------------------------------------------------- Budget, Spent, exceeded


def test_a_budget_without_limits_is_not_any_and_never_exceeded() -> None:
    assert not Budget().any
    assert exceeded(Budget(), Spent(cost_usd=10**9, tokens=10**12, runtime_s=10**9)) is None


@pytest.mark.parametrize("budget", [Budget(max_cost_usd=0.5), Budget(max_tokens=100), Budget(max_runtime_s=60.0)])
def test_any_limit_makes_a_budget(budget: Budget) -> None:
    assert budget.any


def test_cost_budget() -> None:
    budget = Budget(max_cost_usd=2.0)
    assert exceeded(budget, Spent(cost_usd=1.99)) is None
    assert exceeded(budget, Spent(cost_usd=2.0)) == "cost budget reached: $2.00 of max_cost_usd $2.00"
    assert exceeded(budget, Spent(cost_usd=2.5)) == "cost budget reached: $2.50 of max_cost_usd $2.00"


def test_cost_budget_is_not_exceeded_while_no_agent_reported_a_cost() -> None:
    assert exceeded(Budget(max_cost_usd=0.0), Spent(cost_usd=None)) is None
    assert exceeded(Budget(max_cost_usd=0.01), Spent()) is None


def test_token_budget() -> None:
    budget = Budget(max_tokens=1_000_000)
    assert exceeded(budget, Spent(tokens=999_999)) is None
    assert exceeded(budget, Spent(tokens=1_000_000)) == "token budget reached: 1,000,000 of max_tokens 1,000,000"
    assert exceeded(budget, Spent(tokens=None)) is None


def test_runtime_budget() -> None:
    budget = Budget(max_runtime_s=3600.0)
    assert exceeded(budget, Spent(runtime_s=3599.0)) is None
    assert exceeded(budget, Spent(runtime_s=3600.0)) == "runtime budget reached: 1h of max_runtime 1h"
    assert exceeded(Budget(max_runtime_s=90.0), Spent(runtime_s=95.0)) == (
        "runtime budget reached: 1m35s of max_runtime 1m30s"
    )


def test_runtime_budget_counts_even_without_a_reported_cost() -> None:
    budget = Budget(max_cost_usd=1.0, max_tokens=10, max_runtime_s=1.0)
    message = exceeded(budget, Spent(cost_usd=None, tokens=None, runtime_s=2.0))
    assert message is not None
    assert message.startswith("runtime budget reached")


def test_the_first_budget_used_up_is_named_cost_then_tokens_then_runtime() -> None:
    budget = Budget(max_cost_usd=1.0, max_tokens=10, max_runtime_s=1.0)
    everything = Spent(cost_usd=5.0, tokens=50, runtime_s=5.0)
    assert (exceeded(budget, everything) or "").startswith("cost budget")
    no_cost = Spent(cost_usd=0.5, tokens=50, runtime_s=5.0)
    assert (exceeded(budget, no_cost) or "").startswith("token budget")


def test_spent_stays_unknown_until_an_agent_reports() -> None:
    spent = Spent().plus(None, None)
    assert (spent.cost_usd, spent.tokens) == (None, None)


def test_spent_adds_what_is_reported() -> None:
    spent = Spent(runtime_s=12.5).plus(0.25, None).plus(None, 100).plus(0.5, 50)
    assert spent.cost_usd == pytest.approx(0.75)
    assert spent.tokens == 150
    assert spent.runtime_s == 12.5  # plus() does not touch the wall time
    assert Spent(cost_usd=1.0, tokens=3).plus(None, None) == Spent(cost_usd=1.0, tokens=3)
    assert Spent().plus(0.0, 0) == Spent(cost_usd=0.0, tokens=0)
