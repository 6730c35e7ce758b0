"""Budgets for one run: money, tokens and wall time, checked after every iteration."""

from __future__ import annotations

from msgspec import Struct

from ralphloop.words.durations import format_duration


class Budget(Struct, frozen=True):
    """The `budget:` settings; None: no limit."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_runtime_s: float | None = None

    @property
    def any(self) -> bool:
        return any(value is not None for value in (self.max_cost_usd, self.max_tokens, self.max_runtime_s))


class Spent(Struct, frozen=True):
    """What this run has used so far. Cost and tokens are None while no agent has reported them."""

    cost_usd: float | None = None
    tokens: int | None = None
    runtime_s: float = 0.0

    def plus(self, cost_usd: float | None, tokens: int | None) -> Spent:
        return Spent(
            cost_usd=_add(self.cost_usd, cost_usd),
            tokens=None if self.tokens is None and tokens is None else (self.tokens or 0) + (tokens or 0),
            runtime_s=self.runtime_s,
        )


def _add(total: float | None, more: float | None) -> float | None:
    if total is None and more is None:
        return None
    return (total or 0.0) + (more or 0.0)


def exceeded(budget: Budget, spent: Spent) -> str | None:
    """Which budget is used up, as a sentence; None while all are within their limits."""
    if budget.max_cost_usd is not None and spent.cost_usd is not None and spent.cost_usd >= budget.max_cost_usd:
        return f"cost budget reached: ${spent.cost_usd:.2f} of max_cost_usd ${budget.max_cost_usd:.2f}"
    if budget.max_tokens is not None and spent.tokens is not None and spent.tokens >= budget.max_tokens:
        return f"token budget reached: {spent.tokens:,} of max_tokens {budget.max_tokens:,}"
    if budget.max_runtime_s is not None and spent.runtime_s >= budget.max_runtime_s:
        return (
            f"runtime budget reached: {format_duration(spent.runtime_s)} of max_runtime "
            f"{format_duration(budget.max_runtime_s)}"
        )
    return None


def within(budget: Budget, seconds: float, runtime_s: float) -> float:
    """`seconds` of waiting, cut to what is left of the runtime budget (a wait never outlasts the run)."""
    if budget.max_runtime_s is None:
        return seconds
    return max(0.0, min(seconds, budget.max_runtime_s - runtime_s))
