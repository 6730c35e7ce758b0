"""The run's budget across its loops (docs/parallel.md, "Budgets"): `--max-cost`, `--max-tokens` and
`--max-runtime` are the whole parallel run's. What the loops spent is added up from their own status.json (a loop
that ended is counted once, at its end), with what the run's own agent calls spent (`merge.resolve: agent`); the
run stops every loop once it is over, and each loop it starts is given what is left as its own limit, so that no
loop can spend past it alone."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ralphloop.files.read import read_json_object
from ralphloop.fleet.launcher import LoopHandle
from ralphloop.guards.budget import Budget
from ralphloop.project.paths import FeaturePaths
from ralphloop.words.figures import money


class Fleet(Protocol):
    """What the budget reads of a feature's fleet (fleet/context.py's Fleet, which holds a Spending)."""

    @property
    def paths(self) -> FeaturePaths: ...

    @property
    def handles(self) -> Mapping[str, LoopHandle]: ...

    def loop_paths(self, story: str) -> FeaturePaths: ...


@dataclass
class Spending:
    budget: Budget
    started: float  # the run's start, on the monotonic clock
    ended: dict[str, tuple[float, int]] = field(default_factory=dict)  # fleet/story → what its ended runs spent
    fleets: Sequence[Fleet] = field(default_factory=list)  # every fleet of the run (set once they are all made)
    stopped: str | None = None  # why the run stopped for its budget
    # the merge queue's thread charges its resolver's calls while the main thread adds up
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def end_of(self, fleet: Fleet, story: str, pid: int | None) -> None:
        """A loop's run ended: what it spent is counted for good."""
        self.charge(fleet, story, *_live(fleet, story, pid))

    def charge(self, fleet: Fleet, story: str, cost: float, tokens: int) -> None:
        """Spent for good on the story: by its loop's run, or by a call of the run's own for it."""
        key = f"{fleet.paths.name}/{story}"
        with self.lock:
            before = self.ended.get(key, (0.0, 0))
            self.ended[key] = (before[0] + cost, before[1] + tokens)

    def spent(self) -> tuple[float, int]:
        with self.lock:
            ended = list(self.ended.values())
        cost = sum(cost for cost, _ in ended)
        tokens = sum(tokens for _, tokens in ended)
        for fleet in self.fleets:
            for story, handle in fleet.handles.items():
                live = _live(fleet, story, handle.pid)
                cost, tokens = cost + live[0], tokens + live[1]
        return cost, tokens

    def over(self, now: float) -> str | None:
        """Why the run must stop for its budget, or None."""
        return over(self.budget, *self.spent(), now - self.started)

    def child_flags(self, now: float) -> tuple[str, ...]:
        """A new loop's limits: what is left of the run's."""
        return child_flags(self.budget, *self.spent(), now - self.started)


def over(budget: Budget, cost: float, tokens: int, elapsed_s: float) -> str | None:
    """Why a run that spent this, this long, must stop for its budget, or None (pure: the Temporal workflow asks it
    of what its loops reported, as the local coordinator asks it of their status.json)."""
    if budget.max_cost_usd is not None and cost >= budget.max_cost_usd:
        return f"the agents spent {money(cost)} of the run's {money(budget.max_cost_usd)} (--max-cost)"
    if budget.max_tokens is not None and tokens >= budget.max_tokens:
        return f"the agents used {tokens:,} tokens of the run's {budget.max_tokens:,} (--max-tokens)"
    if budget.max_runtime_s is not None and elapsed_s >= budget.max_runtime_s:
        return f"the run reached its --max-runtime of {budget.max_runtime_s:.0f}s"
    return None


def child_flags(budget: Budget, cost: float, tokens: int, elapsed_s: float) -> tuple[str, ...]:
    """A new loop's limits: what is left of the run's (the last of a repeated flag is the one a run takes)."""
    words: list[str] = []
    if budget.max_cost_usd is not None:
        words += ["--max-cost", f"{max(budget.max_cost_usd - cost, 0.0001):.4f}"]
    if budget.max_tokens is not None:
        words += ["--max-tokens", str(max(budget.max_tokens - tokens, 1))]
    if budget.max_runtime_s is not None:
        words += ["--max-runtime", f"{max(budget.max_runtime_s - elapsed_s, 1.0):.0f}s"]
    return tuple(words)


def _live(fleet: Fleet, story: str, pid: int | None) -> tuple[float, int]:
    """What the loop's current run has spent, from its status.json once that run wrote it (its pid)."""
    status = read_json_object(fleet.loop_paths(story).status) or {}
    if pid is None or status.get("pid") != pid:
        return 0.0, 0
    cost, tokens = status.get("costUsd"), status.get("tokensUsed")
    return (
        float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost) else 0.0,
        tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0,
    )
