"""The loop's carried state, one value: every counter has its owner here, and nowhere else.

state.json persists what a later run needs (the last iteration's number, the task and its failed
attempts, the streaks, the next prompt's notes, the agent's session); the run's own numbers (Tally)
start at zero each run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ralphloop.events import Tally
from ralphloop.protocols import AgentResult


@dataclass(frozen=True, slots=True)
class Streaks:
    """Consecutive counted iterations with a property. Any counted iteration without it resets that count;
    an uncounted one (interrupted, limited, an API retry) is no evidence either way."""

    blocked: int = 0
    test_only: int = 0
    question_only: int = 0

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> Streaks:
        """From state.json's `streaks` mapping (unknown keys ignored, missing or malformed ones 0)."""
        found = {name: counts.get(name, 0) for name in ("blocked", "test_only", "question_only")}
        return cls(**{name: value if type(value) is int and value >= 0 else 0 for name, value in found.items()})

    def counts(self) -> dict[str, int]:
        return {"blocked": self.blocked, "test_only": self.test_only, "question_only": self.question_only}

    def after(self, *, counted: bool, blocked: bool, test_only: bool, question_only: bool) -> Streaks:
        if not counted:
            return self
        return Streaks(
            blocked=self.blocked + 1 if blocked else 0,
            test_only=self.test_only + 1 if test_only else 0,
            question_only=self.question_only + 1 if question_only else 0,
        )


@dataclass(frozen=True, slots=True)
class LoopState:
    """Where the loop stands between two iterations."""

    number: int = 0  # the last iteration's number: every agent call of the feature, across runs
    task: str = ""  # the task the failed attempts are counted for
    retries: int = 0  # failed attempts at `task`
    streaks: Streaks = field(default_factory=Streaks)
    model_retry: int = 0  # backoff retries of a wrong model since the last counted iteration
    transient_retry: int = 0  # backoff retries of an API that is down, since the last counted iteration
    notes: tuple[str, ...] = ()  # what the next prompt tells the agent about the last iteration
    session: str = ""  # the agent's last session id (resumed when its backend is set to)
    tally: Tally = field(default_factory=Tally)  # this run's numbers
    kept: tuple[str, ...] = ()  # files of work kept but not committed (a refused claim, a usage limit)

    def attempt_at(self, task_id: str) -> int:
        """Failed attempts so far at `task_id` (0 when the last failures were another task's)."""
        return self.retries if task_id == self.task else 0

    def persisted(self) -> dict[str, Any]:
        """The fields state.json carries (the records add the rest)."""
        return {
            "iteration": self.number,
            "current_story": self.task or None,
            "retry_count": self.retries,
            "streaks": self.streaks.counts(),
            "next_prompt_notes": list(self.notes),
            "session_id": self.session,
        }


def tallied(tally: Tally, result: AgentResult, *, counted: bool, success: bool) -> Tally:
    """`tally` with one more agent call: its tokens by kind, its cost and time."""
    usage = result.usage
    return replace(
        tally,
        counted=tally.counted + counted,
        uncounted=tally.uncounted + (not counted),
        successes=tally.successes + success,
        input_tokens=_plus(tally.input_tokens, usage.input_tokens if usage else None),
        output_tokens=_plus(tally.output_tokens, usage.output_tokens if usage else None),
        cache_read_tokens=_plus(tally.cache_read_tokens, usage.cache_read_tokens if usage else None),
        cache_write_tokens=_plus(tally.cache_write_tokens, usage.cache_creation_tokens if usage else None),
        cost_usd=_plus(tally.cost_usd, result.cost_usd),
        agent_s=tally.agent_s + max(0.0, result.duration_s),
    )


def _plus(total: Any, more: Any) -> Any:
    """Unknown plus unknown stays unknown (None); anything known adds up."""
    if total is None and more is None:
        return None
    return (total or 0) + (more or 0)
