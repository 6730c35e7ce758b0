"""The loop's waits and the guards before an agent starts: the breaker (and its cooldown), the budgets, a
slot in the hourly rate limit; and the waits a decision asks for (usage limit, backoff), where the user
may be asked what to do. Every wait counts down in events and wakes at once on Ctrl+C.
"""

from __future__ import annotations

from msgspec import Struct

from ralphloop.core.events import WINDOW_WAIT, CircuitChanged, Slot, UsageAnswered
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.limits import UsageLimit
from ralphloop.core.waiting import ask_user, count_down
from ralphloop.engine.decide import Action, Decision, stop_decision
from ralphloop.engine.run import Run
from ralphloop.engine.state import LoopState
from ralphloop.guards.breaker import Breaker
from ralphloop.guards.budget import Spent, exceeded, within
from ralphloop.guards.usage import wait_for
from ralphloop.words.figures import local_time

INTERRUPTED = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
_A_HUMAN = (ExitReason.NEEDS_HUMAN, ExitReason.BLOCKED)  # a halt the user can answer (issue 36)


class Cleared(Struct, frozen=True):
    """The guards let the next agent start: the breaker as it stands, and the slot taken."""

    breaker: Breaker
    slot: Slot


def guards_before(run: Run, state: LoopState) -> Cleared | Decision:
    """Before an agent starts: the breaker (read from its file: a reset from elsewhere counts), its cooldown,
    the budgets, the user's pause or stop, then a rate-limit slot. A Decision when the loop must stop instead."""
    ends = run.control.stop_asked if run.control else None  # the user's stop ends every wait
    if run.start_at is not None and not run.start_at.wait(run.clock, run.cancel, run.emit, ends):  # --start-at
        return INTERRUPTED
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
        tally = state.tally  # checked again after every wait: waiting spends the runtime budget too
        over = exceeded(run.policy.budget, Spent(tally.cost_usd, tally.tokens, run.runtime()))
        if over:
            return Decision(Action.HALT, ExitReason.BUDGET, over)
        now = run.clock.now()
        held = run.agent.held(now)
        if held is not None:
            stopped = _hold(run, held)
            if stopped is not None:
                return stopped
            continue
        stop = run.control.hold(run.clock, run.cancel, run.emit) if run.control else None  # after every wait
        if stop is not None or run.cancel.is_set():
            return stop_decision(stop) if stop else INTERRUPTED
        taken = run.ledger.take(now, run.policy.loop.rate_limit_per_hour)
        slot = Slot(taken.used, taken.limit, taken.resets_at)
        if taken.granted:
            return Cleared(breaker, slot)
        message = f"rate limit reached: {taken.used}/{taken.limit} agent calls in the last hour"
        if not wait(
            run, within(run.policy.budget, max(taken.wait_s(now), 1.0), run.runtime()), "rate limit", message, slot
        ):
            return INTERRUPTED


def _hold(run: Run, limit: UsageLimit) -> Decision | None:
    """Every agent is past the user's cap on a usage window: the usage-limit policy, without a call. The stop, or
    None once the window reset (waited for: the book says when, so a restarted ralph waits for the same instant)."""
    usage = run.policy.usage
    answer = "exit" if usage.action == "exit" else _asked(run, limit, limit.message)
    if answer != "wait":
        return Decision(Action.HALT, ExitReason.USAGE_WINDOW, limit.message, limit=limit) if answer else INTERRUPTED
    seconds = wait_for(limit, run.clock.now(), usage.margin_s, usage.fallback_wait_s)
    waited = wait(run, within(run.policy.budget, seconds, run.runtime()), WINDOW_WAIT, limit.message)
    return None if waited else INTERRUPTED


def after_decision(run: Run, decision: Decision, limit: UsageLimit | None) -> Decision:
    """The wait a decision asks for (never past the runtime budget). At a usage limit with the policy
    `ask`, the user is asked first, on the terminal, with a timeout: "exit" stops the run."""
    asked = within(run.policy.budget, run.policy.questions.wait_for_s, run.runtime())  # issue 36: an answer
    seconds = asked if decision.reason in _A_HUMAN else 0.0
    got = run.control.await_answer(run.clock, run.cancel, run.emit, decision.message, seconds) if run.control else None
    if got is not None or (seconds and run.cancel.is_set()):  # answered, stopped or interrupted meanwhile
        return stop_decision(got) if got and got.action == "stop" else Decision(Action.CONTINUE) if got else INTERRUPTED
    if decision.wait_s <= 0 or decision.action not in (Action.WAIT, Action.RETRY):
        return decision
    if decision.wait_kind == "usage limit":
        answer = _asked(run, limit, limit.message if limit else decision.message)
        if answer != "wait":
            return Decision(Action.HALT, ExitReason.USAGE_LIMIT, decision.message) if answer else INTERRUPTED
    if not wait(run, within(run.policy.budget, decision.wait_s, run.runtime()), decision.wait_kind, decision.message):
        return INTERRUPTED
    return decision


def _asked(run: Run, limit: UsageLimit | None, what: str) -> str | None:
    """At a usage limit under `ask`, the user's answer on the terminal, with a timeout ("wait" or "exit"; nobody
    answering: the policy's `on_no_answer`, seed 003: exit); "wait" under any other policy; None: interrupted."""
    usage = run.policy.usage
    if usage.action != "ask" or run.ask is None:
        return "wait"
    resets = f"resets at {local_time(limit.resets_at)}" if limit and limit.resets_at else "no reset time given"
    question = usage.question(f"Usage limit reached ({what}; {resets}).")
    asked = ask_user(run.ask, run.clock, run.emit, question, usage.ask_timeout_s, f"usage limit ({what})")
    if run.cancel.is_set():  # Ctrl+C or a hang-up ended the question: nobody answered, the run was stopped
        return None
    answer = usage.answer(asked)
    run.emit(UsageAnswered(answer))
    return answer


def wait(run: Run, seconds: float, kind: str, message: str, slot: Slot | None = None) -> bool:
    """Wait with a countdown (an event every second); False when interrupted."""
    ends = run.control.stop_asked if run.control else None  # the user's stop ends a long wait too
    return count_down(run.clock, run.cancel, run.emit, seconds, kind, message, slot, ends)
