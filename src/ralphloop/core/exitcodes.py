"""Why a loop ended, and the process exit code each reason maps to."""

from __future__ import annotations

import enum


class ExitReason(enum.Enum):
    """Every way `ralph run` can end; `status --json` reports the value."""

    COMPLETE = "complete"
    STORY_DONE = "story_done"  # a narrowed run (-s ID, --resume-from ID) finished its scope; others are open
    MAX_ITERATIONS = "max_iterations"
    CIRCUIT_OPEN = "circuit_open"
    RETRIES_EXHAUSTED = "retries_exhausted"
    NEEDS_HUMAN = "needs_human"
    BLOCKED = "blocked"
    BUDGET = "budget"
    MODEL_MISMATCH = "model_mismatch"
    AGENT_ERROR = "agent_error"  # the agent cannot work (auth, billing, model) or its API stayed down
    ERROR = "error"
    USAGE_LIMIT = "usage_limit"
    USAGE_WINDOW = "usage_window"  # the user's cap on a usage window (--max-window), not the vendor's refusal
    INTERRUPTED = "interrupted"
    STOPPED = "stopped"  # the user's `ralph stop` (or the page's): after the iteration, or with --now at once

    @property
    def exit_code(self) -> int:
        return _EXIT_CODES[self]

    @property
    def status(self) -> str:
        """The `status` word status.json carries once the run is over."""
        if self is ExitReason.COMPLETE:
            return "complete"
        if self is ExitReason.STORY_DONE:
            return "story_done"
        if self is ExitReason.INTERRUPTED:
            return "interrupted"
        if self is ExitReason.STOPPED:
            return "stopped"
        if self in (ExitReason.ERROR, ExitReason.AGENT_ERROR):
            return "failed"
        if self is ExitReason.CIRCUIT_OPEN:
            return "circuit_open"  # seed 000's status word, which its monitor looks for
        return "halted"


_EXIT_CODES: dict[ExitReason, int] = {
    ExitReason.COMPLETE: 0,
    ExitReason.STORY_DONE: 0,
    ExitReason.MAX_ITERATIONS: 1,
    ExitReason.CIRCUIT_OPEN: 1,
    ExitReason.RETRIES_EXHAUSTED: 1,
    ExitReason.NEEDS_HUMAN: 1,
    ExitReason.BLOCKED: 1,
    ExitReason.BUDGET: 1,
    ExitReason.MODEL_MISMATCH: 1,
    ExitReason.AGENT_ERROR: 1,
    ExitReason.ERROR: 1,
    ExitReason.USAGE_LIMIT: 2,
    ExitReason.USAGE_WINDOW: 2,
    ExitReason.INTERRUPTED: 130,
    ExitReason.STOPPED: 3,
}
