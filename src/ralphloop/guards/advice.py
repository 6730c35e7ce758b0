"""What the user should do next, after a halt a guard caused: commands that work when pasted."""

from __future__ import annotations

import shlex
from datetime import datetime

from ralphloop.core.exitcodes import ExitReason
from ralphloop.guards.breaker import Breaker, CircuitState, guidance
from ralphloop.words.argv import without
from ralphloop.words.figures import local_time


def advice(
    reason: ExitReason,
    *,
    again: str,
    feature: str,
    task: str = "",
    retries: int = 0,
    breaker: Breaker | None = None,
    resets_at: datetime | None = None,
    narrowable: bool = True,
) -> str:
    """`again` is the command that runs the feature again, as the user ran it (`ralph run -f auth -n 5`);
    `feature`: the `-f` words that name the workspace ("" when none are needed);
    `narrowable`: whether its format takes -s/--story."""
    if reason is ExitReason.CIRCUIT_OPEN:
        return guidance(breaker, feature, again) if breaker is not None and breaker.state is CircuitState.OPEN else ""
    if reason is ExitReason.RETRIES_EXHAUSTED:
        # `-s TASK` where the format takes it (a goal plans its own steps: the run itself goes on)
        rest = without(shlex.split(again)[2:], "-s", "--story", "--resume-from")  # the user's flags but the scope
        story = shlex.join(["ralph", "run", "-s", task, *rest]) if narrowable else again
        return (
            f"Human intervention required: {task} failed {retries} times. Read what the agent did "
            f"(ralph logs{' ' + feature if feature else ''}) and its saved attempts (logs/iteration-N.patch, or "
            f"git for-each-ref refs/ralph/attempts/), fix the cause or the task, then run: {story}"
        )
    if reason is ExitReason.USAGE_LIMIT:
        when = local_time(resets_at) if resets_at else "an unknown time"
        return f"The usage limit resets at {when}. Then run: {again}"
    if reason is ExitReason.USAGE_WINDOW:
        when = local_time(resets_at) if resets_at else "an unknown time"
        return (
            f"The window resets at {when}; run then: {again}; or now, with a higher cap (--max-window, "
            "usage_limit.windows in config), or --on-usage-limit wait to wait for the reset"
        )
    if reason is ExitReason.BUDGET:
        return f"Raise the budget (--max-cost, --max-tokens, --max-runtime or budget: in config), then: {again}"
    if reason is ExitReason.MODEL_MISMATCH:
        return "Request another model (--model), or accept any model with --poorman"
    if reason is ExitReason.AGENT_ERROR:
        return f"Fix what the message says, then run: {again}"
    if reason is ExitReason.STOPPED:
        return f"Go on where it stopped: {again}"
    return ""
