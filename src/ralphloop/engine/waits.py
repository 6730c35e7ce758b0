"""The loop's waits and the guards before an agent starts: the breaker (and its cooldown), the budgets, a
slot in the hourly rate limit; and the waits a decision asks for (usage limit, backoff), where the user
may be asked what to do. Every wait counts down in events and wakes at once on Ctrl+C.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ralphloop.engine.decide import Action, Decision
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.errors import RalphError
from ralphloop.events import CircuitChanged, Slot, UsageAnswered, Waiting
from ralphloop.exitcodes import ExitReason
from ralphloop.guards.breaker import Breaker, CircuitState, guidance
from ralphloop.guards.budget import Spent, exceeded
from ralphloop.guards.usage import UsageLimit
from ralphloop.protocols import iso

ASK_TIMEOUT_S = 30.0
INTERRUPTED = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")


@dataclass(frozen=True, slots=True)
class Cleared:
    """The guards let the next agent start: the breaker as it stands, and the slot taken."""

    breaker: Breaker
    slot: Slot


def guards_before(run: Run, state: LoopState) -> Cleared | Decision:
    """Before an agent starts: the breaker (read from its file: a reset from elsewhere counts), its cooldown,
    the budgets, then a rate-limit slot. A Decision when the loop must stop instead."""
    config = run.policy.breaker
    while True:
        breaker, moved = run.breaker.load().before_iteration(config, run.clock.now(), state.number)
        if moved is not None:
            run.breaker.save(breaker, state.number, moved)
            run.emit(CircuitChanged(moved.from_state.value, moved.to_state.value, moved.reason))
        if not breaker.is_open:
            break
        left = breaker.cooldown_left(config, run.clock.now())
        if left is None:
            return Decision(Action.HALT, ExitReason.CIRCUIT_OPEN, f"circuit breaker open: {breaker.reason}")
        if not wait(run, left, "circuit cooldown", f"circuit open ({breaker.reason}); cooling down"):
            return INTERRUPTED
    while True:
        over = over_budget(run, state)  # again after every wait: waiting spends the runtime budget too
        if over:
            return Decision(Action.HALT, ExitReason.BUDGET, over)
        now = run.clock.now()
        taken = run.ledger.take(now, run.policy.rate_limit_per_hour)
        slot = Slot(taken.used, taken.limit, taken.resets_at)
        if taken.granted:
            return Cleared(breaker, slot)
        message = f"rate limit reached: {taken.used}/{taken.limit} agent calls in the last hour"
        if not wait(run, within_budget(run, max(taken.wait_s(now), 1.0)), "rate limit", message, slot):
            return INTERRUPTED


def after_decision(run: Run, decision: Decision, limit: UsageLimit | None) -> Decision:
    """The wait a decision asks for (never past the runtime budget). At a usage limit with the policy
    `ask`, the user is asked first, on the terminal, with a timeout: "exit" stops the run."""
    if decision.wait_s <= 0 or decision.action not in (Action.WAIT, Action.RETRY):
        return decision
    if decision.wait_kind == "usage limit" and run.policy.usage.action == "ask" and run.ask is not None:
        resets = f"resets at {iso(limit.resets_at)}" if limit and limit.resets_at else "no reset time given"
        what = limit.message if limit else decision.message
        answer = (
            "exit"
            if run.ask(f"Usage limit reached ({what}; {resets}). Wait or exit?", ASK_TIMEOUT_S) == "exit"
            else "wait"
        )
        run.emit(UsageAnswered(answer))
        if answer == "exit":
            return Decision(Action.HALT, ExitReason.USAGE_LIMIT, decision.message)
    if not wait(run, within_budget(run, decision.wait_s), decision.wait_kind, decision.message):
        return INTERRUPTED
    return decision


def wait(run: Run, seconds: float, kind: str, message: str, slot: Slot | None = None) -> bool:
    """Wait with a countdown (an event every second); False when interrupted."""
    clock = run.clock
    until_mono = clock.monotonic() + seconds
    until = clock.now() + timedelta(seconds=seconds)
    first = True
    try:
        while True:
            if run.cancel.is_set():
                return False
            left = until_mono - clock.monotonic()
            if left <= 0:
                return True
            run.emit(Waiting(kind, message, until, left, first=first, slot=slot))
            first = False
            clock.sleep(min(1.0, left), run.cancel.fileno())
    finally:
        run.emit(Waiting(kind, message, until, 0.0, done=True, slot=slot))


def over_budget(run: Run, state: LoopState) -> str | None:
    tally = state.tally
    return exceeded(run.policy.budget, Spent(tally.cost_usd, tally.tokens, run.clock.monotonic() - run.started))


def within_budget(run: Run, seconds: float) -> float:
    """`seconds`, cut to what is left of the runtime budget."""
    limit = run.policy.budget.max_runtime_s
    if limit is None:
        return seconds
    return max(0.0, min(seconds, limit - (run.clock.monotonic() - run.started)))


def reset_circuit(run: Run, why: str, number: int) -> None:
    """`--reset-circuit`: CLOSED with every count at zero, before the first iteration."""
    try:
        breaker = run.breaker.load()
    except RalphError:  # a damaged file is what --reset-circuit is for
        breaker = Breaker()
    fresh, moved = breaker.reset(why, run.clock.now(), number)
    run.breaker.save(fresh, number, moved)
    run.emit(CircuitChanged(moved.from_state.value, moved.to_state.value, moved.reason))


def circuit_advice(run: Run) -> str:
    """What to check and do, once the loop stopped with the circuit open."""
    try:
        breaker = run.breaker.load()
    except RalphError:  # the advice is a courtesy; the reason is already told
        return ""
    return guidance(breaker, run.paths.name) if breaker.state is CircuitState.OPEN else ""
