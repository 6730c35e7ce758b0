"""The exit decision as one table: a pure function of what the iteration observed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ralphloop.exitcodes import ExitReason


class Action(Enum):
    CONTINUE = "continue"
    COMPLETE = "complete"
    HALT = "halt"


@dataclass(frozen=True, slots=True)
class Observation:
    """The facts one decision needs, read after the iteration (task source re-read, not trusted)."""

    all_done: bool
    open_ids: tuple[str, ...]
    claimed_complete: bool
    interrupted: bool
    iterations_run: int
    max_iterations: int | None


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    reason: ExitReason | None = None
    message: str = ""
    refused_claim: str | None = None


def decide(obs: Observation) -> Decision:
    """First matching row wins:

    | row | condition                               | decision                         |
    |-----|-----------------------------------------|----------------------------------|
    | 1   | interrupted (Ctrl+C, SIGTERM)           | halt: interrupted (130)          |
    | 2   | every task done (re-read from the file) | complete (0), promise or not     |
    | 3   | max iterations reached                  | halt: max_iterations (1)         |
    | 4   | otherwise                               | continue                         |

    A completion claim while tasks are still open is refused in every row it reaches;
    the refusal is recorded and told to the agent in the next prompt.
    """
    refused = None
    if obs.claimed_complete and not obs.all_done:
        refused = f"{len(obs.open_ids)} task(s) still do not pass: {', '.join(obs.open_ids)}"
    if obs.interrupted:
        return Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted", refused)
    if obs.all_done:
        return Decision(Action.COMPLETE, ExitReason.COMPLETE, "every task passes", refused)
    if obs.max_iterations is not None and obs.iterations_run >= obs.max_iterations:
        message = f"reached the maximum of {obs.max_iterations} iterations with {len(obs.open_ids)} task(s) open"
        return Decision(Action.HALT, ExitReason.MAX_ITERATIONS, message, refused)
    return Decision(Action.CONTINUE, None, "", refused)
