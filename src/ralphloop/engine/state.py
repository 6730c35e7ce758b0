"""The loop's carried state, one value: every counter has its owner here, and nowhere else.

state.json persists what a later run needs (the last iteration's number, the task and its failed
attempts, the streaks, the next prompt's notes, the agent's session); the run's own numbers (Tally)
start at zero each run.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from ralphloop.analysis.reading import Streaks
from ralphloop.core.events import Tally


class LoopState(Struct, frozen=True):
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
    model_unverified: bool = False  # the user was told --model cannot be verified with this agent

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
