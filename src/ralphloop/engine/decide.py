"""The exit decision as one table: a pure function of what the iteration observed.

The table is data (ROWS); `decide` walks it and docs/exit-decision.md holds the same table
(tests/engine/test_decide_rows.py renders ROWS and keeps the two identical).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.limits import UsageLimit
from ralphloop.core.steering import Request, by_you


class Action(Enum):
    CONTINUE = "continue"
    COMPLETE = "complete"
    HALT = "halt"
    WAIT = "wait"  # wait `wait_s`, then go on (usage limit, model backoff, near-limit pause)
    RETRY = "retry"  # the task failed: save its attempt, undo it, try the task again


class Observation(Struct, frozen=True):
    """The facts one decision needs, read after the iteration (the task source re-read, not trusted)."""

    all_done: bool  # every task in the run's scope
    open_ids: tuple[str, ...]
    claimed_complete: bool
    interrupted: bool
    iterations_run: int
    max_iterations: int | None
    claim_sources: tuple[str, ...] = ()
    trust: bool = False  # `completion: trust`: the seeds' rule, a claim is taken at its word
    task_file_error: str | None = None
    gate_failures: tuple[str, ...] = ()  # quality gates that failed; () when none are configured
    claim_refused: str | None = None  # why a completion claim is refused whatever the tasks say (goal mode)
    needs_human: str | None = None
    blocked_streak: int = 0
    blocked_threshold: int = 3
    blocked_reason: str = ""
    usage_limit: str | None = None  # the vendor's limit message, when the agent hit one
    usage_action: str = "wait"  # the policy's answer for this limit: wait or exit
    usage_wait_s: float = 0.0
    agent_fatal: str | None = None  # the agent cannot work at all (auth, billing, model): the message with the fix
    failover: str | None = None  # the agent is limited or cannot log in, and the next agent of the list can run
    transient_error: str | None = None  # the agent's API failed, not the task (overloaded, unreachable)
    transient_retry: int = 0  # which backoff retry this would be (1-based)
    transient_retries: int = 10
    transient_wait_s: float = 0.0
    model_mismatch: str | None = None  # "got sonnet instead of opus"
    model_retry: int = 0  # which backoff retry this would be (1-based)
    model_retries: int = 10
    model_wait_s: float = 0.0
    circuit_open: str | None = None  # the breaker's reason, when it opened after this iteration
    circuit_cooldown_s: float | None = None  # circuit_breaker.cooldown_minutes, in seconds
    task_failed: str | None = None  # why this attempt at the task failed
    attempt: int = 0  # failed attempts at the current task so far, this one included
    max_retries: int = 3
    budget_exceeded: str | None = None
    pause_s: float = 0.0  # near a usage limit: wait this long before the next iteration
    scope: str = ""  # a narrowed run (-s, --resume-from): "story 8.3"
    outside_open: int = 0  # tasks outside that scope still open


class Decision(Struct, frozen=True):
    action: Action
    reason: ExitReason | None = None
    message: str = ""
    refused_claim: str | None = None
    wait_s: float = 0.0
    wait_kind: str = ""  # what a wait is for: usage limit | usage window | usage pause | API backoff | model backoff
    limit: UsageLimit | None = None  # the user's cap on a window that stopped the loop before a call


class Row(Struct, frozen=True):
    condition: str
    outcome: str
    applies: Callable[[Observation], bool]
    decision: Callable[[Observation], Decision]


def complete(scope: str, outside_open: int, done: str = "every task is done") -> Decision:
    """Complete; a narrowed run with tasks open outside its scope is done with its scope, not the feature."""
    if scope and outside_open:
        others = f"{outside_open} other task{'s' if outside_open != 1 else ''} still open"
        return Decision(Action.COMPLETE, ExitReason.STORY_DONE, f"{scope} done; {others}")
    return Decision(Action.COMPLETE, ExitReason.COMPLETE, done)


def stop_decision(stop: Request) -> Decision:
    return Decision(Action.HALT, ExitReason.STOPPED, by_you(stop, "stopped at once" if stop.now else "stopped"))


def _max_reached(obs: Observation) -> bool:
    return obs.max_iterations is not None and obs.iterations_run >= obs.max_iterations


ROWS: tuple[Row, ...] = (
    Row(
        "interrupted (Ctrl+C, SIGTERM, SIGHUP)",
        "halt: interrupted (130)",
        lambda obs: obs.interrupted,
        lambda obs: Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted"),
    ),
    Row(
        "the task file is invalid after the iteration",
        "halt: error (1)",
        lambda obs: obs.task_file_error is not None,
        lambda obs: Decision(Action.HALT, ExitReason.ERROR, obs.task_file_error or ""),
    ),
    Row(
        "every task done (re-read from the file) and every quality gate passes",
        "complete (0), with or without a claim; a narrowed run (-s, --resume-from) with other tasks open: "
        "story_done (0), its scope done, not the feature",
        lambda obs: obs.all_done and not obs.gate_failures,
        lambda obs: complete(obs.scope, obs.outside_open),
    ),
    Row(
        "`completion: trust` and the agent claimed completion (gates passing, and not refused in goal mode)",
        "complete (0), tasks left open",
        lambda obs: obs.trust and obs.claimed_complete and not obs.gate_failures and obs.claim_refused is None,
        lambda obs: Decision(
            Action.COMPLETE,
            ExitReason.COMPLETE,
            f"the agent claimed completion ({', '.join(obs.claim_sources) or 'claim'}; completion: trust)"
            + (f"; {len(obs.open_ids)} task(s) still open" if obs.open_ids else ""),
        ),
    ),
    Row(
        "the agent hit its usage limit or cannot log in, and another agent of the list can run (not counted)",
        "retry at once, on that agent",
        lambda obs: obs.failover is not None,
        lambda obs: Decision(Action.RETRY, None, obs.failover or ""),
    ),
    Row(
        "the agent hit a vendor usage limit and the policy (or the user) says exit",
        "halt: usage_limit (2)",
        lambda obs: obs.usage_limit is not None and obs.usage_action == "exit",
        lambda obs: Decision(Action.HALT, ExitReason.USAGE_LIMIT, f"usage limit: {obs.usage_limit}"),
    ),
    Row(
        "the agent hit a vendor usage limit (not counted: no breaker, no retry, no iteration)",
        "wait until the reset (+ margin), then the same task",
        lambda obs: obs.usage_limit is not None,
        lambda obs: Decision(
            Action.WAIT, None, f"usage limit: {obs.usage_limit}", wait_s=obs.usage_wait_s, wait_kind="usage limit"
        ),
    ),
    Row(
        "the agent cannot work at all: not logged in, invalid key, no credit, unknown model, a refused flag",
        "halt: agent_error (1), with the fix",
        lambda obs: obs.agent_fatal is not None,
        lambda obs: Decision(Action.HALT, ExitReason.AGENT_ERROR, obs.agent_fatal or ""),
    ),
    Row(
        "the agent's API failed (overloaded, 5xx, unreachable, rate-limited) and the backoff retries are used up",
        "halt: agent_error (1)",
        lambda obs: obs.transient_error is not None and obs.transient_retry > obs.transient_retries,
        lambda obs: Decision(
            Action.HALT,
            ExitReason.AGENT_ERROR,
            f"{obs.transient_error} (still failing after {obs.transient_retries} retries)",
        ),
    ),
    Row(
        "the agent's API failed (overloaded, 5xx, unreachable, rate-limited; not counted)",
        "retry after a backoff (5 s doubling, cap 600 s); the attempt is saved and undone",
        lambda obs: obs.transient_error is not None,
        lambda obs: Decision(
            Action.RETRY,
            None,
            f"{obs.transient_error}; retrying in {obs.transient_wait_s:g}s "
            f"(attempt {obs.transient_retry}/{obs.transient_retries})",
            wait_s=obs.transient_wait_s,
            wait_kind="API backoff",
        ),
    ),
    Row(
        "`--model` given, another model answered, and the backoff retries are used up",
        "halt: model_mismatch (1)",
        lambda obs: obs.model_mismatch is not None and obs.model_retry > obs.model_retries,
        lambda obs: Decision(
            Action.HALT,
            ExitReason.MODEL_MISMATCH,
            f"{obs.model_mismatch} after {obs.model_retries} retries (--poorman accepts any model)",
        ),
    ),
    Row(
        "`--model` given and another model answered (not counted)",
        "retry after a backoff (5 s doubling, cap 600 s); the attempt is saved and undone",
        lambda obs: obs.model_mismatch is not None,
        lambda obs: Decision(
            Action.RETRY,
            None,
            f"{obs.model_mismatch}; retrying in {obs.model_wait_s:g}s (attempt {obs.model_retry}/{obs.model_retries})",
            wait_s=obs.model_wait_s,
            wait_kind="model backoff",
        ),
    ),
    Row(
        "the agent's JSON result says needs-human",
        "halt: needs_human (1)",
        lambda obs: obs.needs_human is not None,
        lambda obs: Decision(Action.HALT, ExitReason.NEEDS_HUMAN, f"the agent needs a human: {obs.needs_human}"),
    ),
    Row(
        "the agent reported BLOCKED in `blocked_threshold` consecutive iterations",
        "halt: blocked (1)",
        lambda obs: obs.blocked_streak >= obs.blocked_threshold,
        lambda obs: Decision(
            Action.HALT,
            ExitReason.BLOCKED,
            f"the agent reported BLOCKED {obs.blocked_streak} times in a row: {obs.blocked_reason}",
        ),
    ),
    Row(
        "the circuit breaker opened (no progress, the same error, failures, permission denials)",
        "halt: circuit_open (1); with `cooldown_minutes` and iterations left: wait, then one probing iteration",
        lambda obs: obs.circuit_open is not None,
        lambda obs: (
            Decision(Action.HALT, ExitReason.CIRCUIT_OPEN, f"circuit breaker open: {obs.circuit_open}")
            if obs.circuit_cooldown_s is None or _max_reached(obs)
            else Decision(Action.CONTINUE, None, f"circuit breaker open: {obs.circuit_open}; cooling down")
        ),
    ),
    Row(
        "the task failed its `max_retries`-th attempt",
        "halt: retries_exhausted (1)",
        lambda obs: obs.task_failed is not None and obs.attempt >= obs.max_retries,
        lambda obs: Decision(
            Action.HALT,
            ExitReason.RETRIES_EXHAUSTED,
            f"MAX RETRIES EXCEEDED — human intervention required: attempt {obs.attempt}/{obs.max_retries} "
            f"failed: {obs.task_failed}",
        ),
    ),
    Row(
        "a budget is used up (max_cost_usd, max_tokens, max_runtime)",
        "halt: budget (1)",
        lambda obs: obs.budget_exceeded is not None,
        lambda obs: Decision(Action.HALT, ExitReason.BUDGET, obs.budget_exceeded or ""),
    ),
    Row(
        "max iterations reached",
        "halt: max_iterations (1)",
        _max_reached,
        lambda obs: Decision(
            Action.HALT,
            ExitReason.MAX_ITERATIONS,
            f"reached the maximum of {obs.max_iterations} iterations with {len(obs.open_ids)} task(s) open",
        ),
    ),
    Row(
        "the task failed (FAIL for it, crash, non-zero exit, timeout, is_error), attempts left",
        "retry: the attempt is saved (patch + git ref) and undone, then the task again",
        lambda obs: obs.task_failed is not None,
        lambda obs: Decision(
            Action.RETRY, None, f"attempt {obs.attempt}/{obs.max_retries} failed: {obs.task_failed}; retrying"
        ),
    ),
    Row(
        "near the vendor's usage limit (`usage_limit.pause_at`)",
        "wait until that window resets, then continue",
        lambda obs: obs.pause_s > 0,
        lambda obs: Decision(
            Action.WAIT,
            None,
            "near the usage limit: pausing until it resets",
            wait_s=obs.pause_s,
            wait_kind="usage pause",
        ),
    ),
    Row(
        "otherwise",
        "continue",
        lambda obs: True,
        lambda obs: Decision(Action.CONTINUE),
    ),
)


def refusal(obs: Observation) -> str | None:
    """Why a completion claim is not believed, or None (no claim, a verified one, or trust mode)."""
    if not obs.claimed_complete:
        return None
    if obs.claim_refused:
        return obs.claim_refused
    if not obs.all_done and not obs.trust:
        return f"{len(obs.open_ids)} task(s) still do not pass: {', '.join(obs.open_ids)}"
    if obs.gate_failures:
        return f"quality gates fail: {', '.join(obs.gate_failures)}"
    return None


def decide(obs: Observation) -> Decision:
    """The first row that applies decides; a refused claim is attached whatever the row."""
    for row in ROWS:
        if row.applies(obs):
            return replace(row.decision(obs), refused_claim=refusal(obs))
    raise AssertionError("the last row always applies")
