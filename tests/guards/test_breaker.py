"""guards/breaker.py: every transition of seed 000's UC-3 and UC-6, with an injected clock (never a sleep)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from ralphloop.guards.breaker import (
    Breaker,
    BreakerConfig,
    CircuitState,
    IterationFacts,
    Transition,
    guidance,
)

CLOSED, HALF_OPEN, OPEN = CircuitState.CLOSED, CircuitState.HALF_OPEN, CircuitState.OPEN
T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
DEFAULT = BreakerConfig()


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def idle(n: int) -> IterationFacts:
    """A clean iteration that changed nothing."""
    return IterationFacts(iteration=n, progress=False, failed=False)


def worked(n: int) -> IterationFacts:
    return IterationFacts(iteration=n, progress=True, failed=False)


def failed(n: int, error: str = "boom", fingerprint: str | None = "fp-boom", progress: bool = False) -> IterationFacts:
    return IterationFacts(iteration=n, progress=progress, failed=True, error=error, fingerprint=fingerprint)


def denied(n: int, *commands: str, progress: bool = False) -> IterationFacts:
    return IterationFacts(iteration=n, progress=progress, failed=False, denials=commands)


def run(
    facts: Iterable[IterationFacts], config: BreakerConfig = DEFAULT, start: Breaker | None = None
) -> tuple[Breaker, list[Transition]]:
    """Feed iterations one minute apart; the final breaker and every transition."""
    breaker = start or Breaker()
    transitions: list[Transition] = []
    for fact in facts:
        breaker, transition = breaker.after(fact, config, at(60 * fact.iteration))
        if transition:
            transitions.append(transition)
    return breaker, transitions


# ---------------------------------------------------------------- UC-3 main scenario and 6a/6b/6c/7a


def test_a_fresh_breaker_is_closed_with_zero_counters() -> None:
    breaker = Breaker()
    assert breaker.state is CLOSED
    assert not breaker.is_open
    assert (breaker.no_progress, breaker.same_error, breaker.failures, breaker.denial_streak) == (0, 0, 0, 0)
    assert breaker.total_opens == 0
    assert breaker.probation is False


def test_main_scenario_progress_keeps_it_closed_without_transitions() -> None:
    breaker, transitions = run(worked(n) for n in range(1, 11))
    assert breaker.state is CLOSED
    assert breaker.no_progress == 0
    assert breaker.last_progress_iteration == 10
    assert transitions == []


def test_uc3_extensions_6a_6b_6c_step_by_step() -> None:
    breaker = Breaker()
    # 6a: first loop without changes: counter 1, stays CLOSED, nothing to log
    breaker, transition = breaker.after(idle(1), DEFAULT, at(60))
    assert (breaker.state, breaker.no_progress, transition) == (CLOSED, 1, None)
    # 6b: second loop: counter 2, HALF_OPEN, "monitoring mode"
    breaker, transition = breaker.after(idle(2), DEFAULT, at(120))
    assert (breaker.state, breaker.no_progress) == (HALF_OPEN, 2)
    assert transition == Transition(at(120), 2, CLOSED, HALF_OPEN, breaker.reason)
    assert "monitoring mode" in transition.reason
    assert breaker.last_change == at(120)
    assert breaker.opened_at is None
    assert not breaker.is_open
    # 6c: third loop: counter 3, OPEN
    breaker, transition = breaker.after(idle(3), DEFAULT, at(180))
    assert (breaker.state, breaker.no_progress) == (OPEN, 3)
    assert breaker.is_open
    assert transition is not None
    assert (transition.at, transition.iteration, transition.from_state, transition.to_state) == (
        at(180),
        3,
        HALF_OPEN,
        OPEN,
    )
    assert "no progress in 3 iterations" in transition.reason
    assert breaker.reason == transition.reason
    assert breaker.opened_at == at(180)
    assert breaker.last_change == at(180)
    assert breaker.total_opens == 1


def test_uc3_7a_progress_in_half_open_recovers_the_circuit() -> None:
    breaker, _ = run([idle(1), idle(2)])
    assert breaker.state is HALF_OPEN
    breaker, transition = breaker.after(worked(3), DEFAULT, at(180))
    assert breaker.state is CLOSED
    assert breaker.no_progress == 0
    assert breaker.last_progress_iteration == 3
    assert transition is not None
    assert (transition.from_state, transition.to_state, transition.iteration) == (HALF_OPEN, CLOSED, 3)
    assert "circuit recovered" in transition.reason
    assert breaker.reason == transition.reason
    # the next quiet iteration in CLOSED clears the reason
    breaker, _ = breaker.after(worked(4), DEFAULT, at(240))
    assert (breaker.state, breaker.reason) == (CLOSED, "")


def test_uc3_7a_progress_in_closed_resets_the_counter_without_a_transition() -> None:
    breaker, _ = run([idle(1)])
    assert breaker.no_progress == 1
    breaker, transition = breaker.after(worked(2), DEFAULT, at(120))
    assert (breaker.state, breaker.no_progress, transition) == (CLOSED, 0, None)
    # the count starts again from zero: one more idle iteration does not reach HALF_OPEN
    breaker, transition = breaker.after(idle(3), DEFAULT, at(180))
    assert (breaker.state, breaker.no_progress, transition) == (CLOSED, 1, None)


def test_no_progress_must_be_consecutive() -> None:
    breaker, transitions = run([idle(1), idle(2), worked(3), idle(4), idle(5), worked(6), idle(7), idle(8)])
    assert breaker.state is HALF_OPEN
    assert [(t.from_state, t.to_state) for t in transitions] == [
        (CLOSED, HALF_OPEN),
        (HALF_OPEN, CLOSED),
        (CLOSED, HALF_OPEN),
        (HALF_OPEN, CLOSED),
        (CLOSED, HALF_OPEN),
    ]
    assert breaker.total_opens == 0


def test_progress_that_failed_is_no_progress() -> None:
    """A failed iteration counts as a failure even when files changed: it does not recover the circuit."""
    breaker, _ = run([idle(1), idle(2)])
    breaker, transition = breaker.after(failed(3, progress=True), DEFAULT, at(180))
    assert breaker.state is HALF_OPEN
    assert transition is None
    assert breaker.failures == 1
    assert breaker.no_progress == 2
    assert breaker.last_progress_iteration == 0


@pytest.mark.parametrize("threshold", [4, 5, 7])
def test_no_progress_threshold_from_the_config_is_honoured(threshold: int) -> None:
    config = BreakerConfig(no_progress_threshold=threshold)
    breaker = Breaker()
    states = []
    for n in range(1, threshold + 1):
        breaker, _ = breaker.after(idle(n), config, at(60 * n))
        states.append(breaker.state)
    assert states == [CLOSED] + [HALF_OPEN] * (threshold - 2) + [OPEN]
    assert breaker.no_progress == threshold
    assert f"no progress in {threshold} iterations" in breaker.reason


def test_half_open_after_from_the_config_is_honoured() -> None:
    config = BreakerConfig(half_open_after=3, no_progress_threshold=5)
    breaker, transitions = run([idle(n) for n in range(1, 6)], config)
    assert [(t.iteration, t.to_state) for t in transitions] == [(3, HALF_OPEN), (5, OPEN)]
    assert breaker.state is OPEN


def test_half_open_counts_continue_and_open_at_the_threshold() -> None:
    config = BreakerConfig(no_progress_threshold=5)
    breaker, transitions = run([idle(n) for n in range(1, 5)], config)
    assert (breaker.state, breaker.no_progress) == (HALF_OPEN, 4)
    assert [t.to_state for t in transitions] == [HALF_OPEN]  # staying HALF_OPEN is not a transition


# ---------------------------------------------------------------- 6d: the same error


def test_uc3_6d_same_error_five_times_opens_with_that_reason() -> None:
    # failed iterations with progress: only the same-error count and the failure count move
    config = BreakerConfig(failure_threshold=100)
    breaker = Breaker()
    for n in range(1, 5):
        breaker, transition = breaker.after(failed(n, "ImportError: no module x", "fp-x"), config, at(60 * n))
        assert (breaker.state, breaker.same_error, transition) == (CLOSED, n, None)
    breaker, transition = breaker.after(failed(5, "ImportError: no module x", "fp-x"), config, at(300))
    assert breaker.state is OPEN
    assert breaker.same_error == 5
    assert transition is not None
    assert (transition.from_state, transition.to_state) == (CLOSED, OPEN)
    assert "the same error in 5 iterations in a row" in transition.reason
    assert "ImportError: no module x" in transition.reason
    assert breaker.last_error == "ImportError: no module x"
    assert breaker.last_fingerprint == "fp-x"


def test_same_error_counts_even_in_iterations_that_made_progress() -> None:
    facts = [
        IterationFacts(n, progress=True, failed=False, error="warning: deprecated", fingerprint="fp-w")
        for n in range(1, 6)
    ]
    breaker, transitions = run(facts)
    assert breaker.state is OPEN
    assert "the same error in 5" in breaker.reason
    assert len(transitions) == 1


def test_same_error_wins_the_reason_over_the_failure_streak() -> None:
    """Five identical failures hit both thresholds; the seed's reason is the repeated error."""
    breaker, _ = run(failed(n, "E: same", "fp-same") for n in range(1, 6))
    assert breaker.state is OPEN
    assert (breaker.same_error, breaker.failures) == (5, 5)
    assert breaker.reason.startswith("the same error in 5 iterations")


def test_varying_errors_never_open_through_the_same_error_rule() -> None:
    config = BreakerConfig(failure_threshold=1000)
    facts = [failed(n, f"error number {n}", f"fp-{n}") for n in range(1, 51)]
    breaker = Breaker()
    for fact in facts:
        breaker, transition = breaker.after(fact, config, at(60 * fact.iteration))
        assert transition is None
        assert breaker.state is CLOSED
        assert breaker.same_error == 1
    assert breaker.failures == 50
    assert breaker.no_progress == 0  # failures leave the no-progress streak alone


def test_two_alternating_errors_never_open_through_the_same_error_rule() -> None:
    config = BreakerConfig(failure_threshold=1000)
    facts = [failed(n, "a" if n % 2 else "b", "fp-a" if n % 2 else "fp-b") for n in range(1, 21)]
    breaker, transitions = run(facts, config)
    assert breaker.state is CLOSED
    assert transitions == []
    assert breaker.same_error == 1


def test_a_different_error_restarts_the_same_error_count_at_one() -> None:
    config = BreakerConfig(failure_threshold=100)
    facts = [failed(n, "a", "fp-a") for n in range(1, 5)] + [failed(5, "b", "fp-b")]
    breaker, _ = run(facts, config)
    assert (breaker.state, breaker.same_error, breaker.last_fingerprint) == (CLOSED, 1, "fp-b")


def test_an_iteration_without_an_error_ends_the_same_error_count() -> None:
    config = BreakerConfig(failure_threshold=100)
    facts = [*(failed(n, "a", "fp-a") for n in range(1, 5)), worked(5), failed(6, "a", "fp-a")]
    breaker, _ = run(facts, config)
    assert (breaker.state, breaker.same_error) == (CLOSED, 1)


def test_same_error_threshold_from_the_config_is_honoured() -> None:
    config = BreakerConfig(same_error_threshold=2, failure_threshold=100)
    breaker, transitions = run([failed(1, "x", "fp"), failed(2, "x", "fp")], config)
    assert breaker.state is OPEN
    assert [t.iteration for t in transitions] == [2]
    assert "the same error in 2" in breaker.reason


# ---------------------------------------------------------------- the failure streak


def test_five_failed_iterations_in_a_row_open_the_circuit() -> None:
    breaker = Breaker()
    for n in range(1, 5):
        breaker, transition = breaker.after(failed(n, f"crash {n}", f"fp-{n}"), DEFAULT, at(60 * n))
        assert (breaker.state, breaker.failures, transition) == (CLOSED, n, None)
        assert breaker.no_progress == 0
    breaker, transition = breaker.after(failed(5, "crash 5", "fp-5"), DEFAULT, at(300))
    assert breaker.state is OPEN
    assert transition is not None
    assert "5 failed iterations in a row" in transition.reason
    assert "crash 5" in transition.reason  # the last error is named


def test_a_failure_without_error_text_still_has_a_readable_reason() -> None:
    breaker, _ = run(failed(n, error="", fingerprint=None) for n in range(1, 6))
    assert breaker.state is OPEN
    assert "5 failed iterations in a row" in breaker.reason
    assert "(no error text)" in breaker.reason


def test_a_failed_iteration_leaves_the_no_progress_streak_alone() -> None:
    breaker, _ = run([idle(1), failed(2, "e1", "f1"), failed(3, "e2", "f2")])
    assert (breaker.state, breaker.no_progress, breaker.failures) == (CLOSED, 1, 2)
    # the no-progress streak continues from 1: the next idle iteration makes it 2 (HALF_OPEN)
    breaker, transition = breaker.after(idle(4), DEFAULT, at(240))
    assert (breaker.state, breaker.no_progress, breaker.failures) == (HALF_OPEN, 2, 0)
    assert transition is not None


def test_a_clean_iteration_without_progress_ends_the_failure_streak() -> None:
    config = BreakerConfig(no_progress_threshold=100, half_open_after=100)
    facts = [failed(1, "a", "fa"), failed(2, "b", "fb"), failed(3, "c", "fc"), failed(4, "d", "fd"), idle(5)]
    facts += [failed(n, f"e{n}", f"f{n}") for n in range(6, 10)]
    breaker, transitions = run(facts, config)
    assert (breaker.state, breaker.failures, transitions) == (CLOSED, 4, [])


def test_progress_ends_both_streaks() -> None:
    breaker, _ = run([idle(1), failed(2, "a", "fa"), failed(3, "b", "fb"), worked(4)])
    assert (breaker.no_progress, breaker.failures, breaker.same_error) == (0, 0, 0)


def test_failures_and_no_progress_both_stay_alive_when_interleaved() -> None:
    """Neither threshold is starved: 2 idle + 4 failed then 1 idle opens by no progress (3)."""
    facts = [idle(1), idle(2), *(failed(n, f"e{n}", f"f{n}") for n in range(3, 7)), idle(7)]
    breaker, _ = run(facts)
    assert breaker.state is OPEN
    assert "no progress in 3" in breaker.reason


def test_failures_in_half_open_open_at_the_failure_threshold() -> None:
    facts = [idle(1), idle(2), *(failed(n, f"e{n}", f"f{n}") for n in range(3, 8))]
    breaker, transitions = run(facts)
    assert [(t.iteration, t.from_state, t.to_state) for t in transitions] == [
        (2, CLOSED, HALF_OPEN),
        (7, HALF_OPEN, OPEN),
    ]
    assert "5 failed iterations" in breaker.reason


def test_failure_threshold_from_the_config_is_honoured() -> None:
    config = BreakerConfig(failure_threshold=2)
    breaker, transitions = run([failed(1, "a", "fa"), failed(2, "b", "fb")], config)
    assert breaker.state is OPEN
    assert [t.iteration for t in transitions] == [2]


# ---------------------------------------------------------------- permission denials


def test_denials_in_one_iteration_then_none_do_not_open() -> None:
    breaker, transitions = run([denied(1, "Bash(rm -rf build)"), worked(2), denied(3, "Write"), worked(4)])
    assert breaker.state is CLOSED
    assert transitions == []
    assert breaker.denial_streak == 0
    assert breaker.denied == ()


def test_denials_followed_by_an_idle_iteration_do_not_open() -> None:
    breaker, transitions = run([denied(1, "Bash(git push)", progress=True), idle(2)])
    assert breaker.state is CLOSED
    assert transitions == []
    assert (breaker.denial_streak, breaker.denied) == (0, ())


def test_denials_in_two_iterations_in_a_row_open_naming_the_commands() -> None:
    breaker, transition = Breaker().after(denied(1, "Bash(git push)", progress=True), DEFAULT, at(60))
    assert (breaker.state, breaker.denial_streak, transition) == (CLOSED, 1, None)
    breaker, transition = breaker.after(denied(2, "Bash(rm -rf /tmp/x)", "Bash(git push)"), DEFAULT, at(120))
    assert breaker.state is OPEN
    assert transition is not None
    assert (transition.from_state, transition.to_state) == (CLOSED, OPEN)
    assert "permission denied in 2 iterations in a row" in transition.reason
    assert "Bash(git push)" in transition.reason
    assert "Bash(rm -rf /tmp/x)" in transition.reason
    assert breaker.denied == ("Bash(git push)", "Bash(rm -rf /tmp/x)")  # each command once, first seen first


def test_denials_open_even_when_the_iterations_made_progress() -> None:
    breaker, _ = run([denied(1, "WebFetch", progress=True), denied(2, "WebFetch", progress=True)])
    assert breaker.state is OPEN
    assert "WebFetch" in breaker.reason


def test_many_denied_commands_are_shortened_in_the_reason() -> None:
    commands = tuple(f"Bash(cmd{i})" for i in range(12))
    breaker, _ = run([denied(1, *commands[:6]), denied(2, *commands[6:])])
    assert breaker.state is OPEN
    assert "Bash(cmd0)" in breaker.reason
    assert "Bash(cmd7)" in breaker.reason
    assert "Bash(cmd8)" not in breaker.reason
    assert breaker.reason.endswith("…")
    assert len(breaker.denied) == 12


def test_denial_threshold_from_the_config_is_honoured() -> None:
    config = BreakerConfig(denial_threshold=3)
    breaker, _ = run([denied(1, "A", progress=True), denied(2, "B", progress=True)], config)
    assert (breaker.state, breaker.denial_streak) == (CLOSED, 2)
    breaker, _ = run([denied(3, "C", progress=True)], config, start=breaker)
    assert breaker.state is OPEN
    assert "permission denied in 3 iterations" in breaker.reason


# ---------------------------------------------------------------- cooldown


def opened_at_zero() -> Breaker:
    breaker = Breaker()
    for n in range(1, 4):
        breaker, _ = breaker.after(idle(n), DEFAULT, at(0))
    assert breaker.state is OPEN
    assert breaker.opened_at == at(0)
    return breaker


def test_without_a_cooldown_before_iteration_never_leaves_open() -> None:
    breaker = opened_at_zero()
    later, transition = breaker.before_iteration(DEFAULT, at(10 * 365 * 86400), 4)
    assert later is breaker
    assert transition is None
    assert breaker.cooldown_left(DEFAULT, at(10**6)) is None


def test_before_the_cooldown_passes_it_stays_open() -> None:
    config = BreakerConfig(cooldown_s=1800)
    breaker = opened_at_zero()
    for seconds in (0, 1, 900, 1799):
        later, transition = breaker.before_iteration(config, at(seconds), 4)
        assert later.state is OPEN
        assert transition is None
        assert breaker.cooldown_left(config, at(seconds)) == 1800 - seconds


def test_after_the_cooldown_it_is_half_open_on_probation_with_zeroed_counters() -> None:
    config = BreakerConfig(cooldown_s=1800)
    breaker = opened_at_zero()
    assert breaker.cooldown_left(config, at(1800)) == 0.0
    assert breaker.cooldown_left(config, at(5000)) == 0.0
    later, transition = breaker.before_iteration(config, at(1800), 4)
    assert later.state is HALF_OPEN
    assert later.probation is True
    assert (later.no_progress, later.failures, later.same_error, later.denial_streak) == (0, 0, 0, 0)
    assert later.last_change == at(1800)
    assert later.cooldown_left(config, at(1800)) is None
    assert transition is not None
    assert (transition.at, transition.iteration, transition.from_state, transition.to_state) == (
        at(1800),
        4,
        OPEN,
        HALF_OPEN,
    )
    assert "cooldown of 30 min passed" in transition.reason
    assert later.reason == transition.reason


def test_before_iteration_leaves_closed_and_half_open_alone() -> None:
    config = BreakerConfig(cooldown_s=1)
    for breaker in (Breaker(), run([idle(1), idle(2)])[0]):
        later, transition = breaker.before_iteration(config, at(10**6), 5)
        assert later is breaker
        assert transition is None


def test_on_probation_one_iteration_without_progress_reopens_at_once() -> None:
    config = BreakerConfig(cooldown_s=600)
    breaker, _ = opened_at_zero().before_iteration(config, at(600), 4)
    breaker, transition = breaker.after(idle(4), config, at(660))
    assert breaker.state is OPEN
    assert breaker.probation is False
    assert breaker.opened_at == at(660)
    assert breaker.total_opens == 2
    assert transition is not None
    assert (transition.from_state, transition.to_state) == (HALF_OPEN, OPEN)
    assert "no progress" in transition.reason
    # and the new cooldown runs from the reopening
    still, _ = breaker.before_iteration(config, at(660 + 599), 5)
    assert still.state is OPEN
    again, _ = breaker.before_iteration(config, at(660 + 600), 5)
    assert (again.state, again.probation) == (HALF_OPEN, True)


def test_on_probation_a_failed_iteration_reopens_at_once() -> None:
    config = BreakerConfig(cooldown_s=600)
    breaker, _ = opened_at_zero().before_iteration(config, at(600), 4)
    breaker, transition = breaker.after(failed(4, "crash", "fp"), config, at(660))
    assert breaker.state is OPEN
    assert transition is not None


def test_a_failed_iteration_on_probation_gives_a_reason_that_makes_sense() -> None:
    config = BreakerConfig(cooldown_s=600)
    breaker, _ = opened_at_zero().before_iteration(config, at(600), 4)
    breaker, _ = breaker.after(failed(4, "crash", "fp"), config, at(660))
    assert breaker.state is OPEN
    assert "in 0 iterations" not in breaker.reason


def test_on_probation_progress_closes_the_circuit() -> None:
    config = BreakerConfig(cooldown_s=600)
    breaker, _ = opened_at_zero().before_iteration(config, at(600), 4)
    breaker, transition = breaker.after(worked(4), config, at(660))
    assert breaker.state is CLOSED
    assert breaker.probation is False
    assert transition is not None
    assert (transition.from_state, transition.to_state) == (HALF_OPEN, CLOSED)
    assert "circuit recovered" in transition.reason
    # an ordinary breaker again: one idle iteration does not reopen it
    breaker, transition = breaker.after(idle(5), config, at(720))
    assert (breaker.state, transition) == (CLOSED, None)


def test_an_ordinary_half_open_is_not_on_probation() -> None:
    breaker, _ = run([idle(1), idle(2)])
    assert (breaker.state, breaker.probation) == (HALF_OPEN, False)
    breaker, _ = run([failed(3, "x", "fx")], start=breaker)
    assert breaker.state is HALF_OPEN  # one failure in monitoring mode does not open it


# ---------------------------------------------------------------- UC-6: reset


def test_reset_from_open_closes_with_zeroed_counters_and_logs() -> None:
    last = IterationFacts(7, progress=False, failed=True, error="same", fingerprint="fp", denials=("Bash(rm)",))
    breaker, _ = run([idle(1), denied(2, "X"), *(failed(n, "same", "fp") for n in range(3, 7)), last])
    assert breaker.state is OPEN
    assert (breaker.no_progress, breaker.same_error, breaker.failures, breaker.denial_streak) == (2, 5, 5, 1)
    assert breaker.denied == ("Bash(rm)",)
    fresh, transition = breaker.reset("manual reset by user", at(9999), 6)
    assert fresh.state is CLOSED
    assert (fresh.no_progress, fresh.same_error, fresh.failures, fresh.denial_streak) == (0, 0, 0, 0)
    assert (fresh.denied, fresh.last_error, fresh.last_fingerprint, fresh.reason) == ((), None, None, "")
    assert fresh.opened_at is None
    assert fresh.probation is False
    assert fresh.last_change == at(9999)
    assert fresh.total_opens == breaker.total_opens == 1  # a statistic, not a counter
    assert transition == Transition(at(9999), 6, OPEN, CLOSED, "reset: manual reset by user")


def test_reset_from_closed_is_still_logged() -> None:
    fresh, transition = Breaker().reset("manual reset by user", at(5), 0)
    assert fresh.state is CLOSED
    assert transition.from_state is CLOSED
    assert transition.to_state is CLOSED
    assert transition.reason == "reset: manual reset by user"
    assert transition.at == at(5)


def test_reset_from_half_open_on_probation_clears_probation() -> None:
    config = BreakerConfig(cooldown_s=60)
    breaker, _ = opened_at_zero().before_iteration(config, at(60), 4)
    fresh, transition = breaker.reset("fixed the task", at(70), 4)
    assert (fresh.state, fresh.probation) == (CLOSED, False)
    assert (transition.from_state, transition.to_state) == (HALF_OPEN, CLOSED)


def test_after_a_reset_the_thresholds_count_from_zero() -> None:
    breaker = opened_at_zero()
    fresh, _ = breaker.reset("manual", at(100), 3)
    fresh, transitions = run([idle(4)], start=fresh)
    assert (fresh.state, fresh.no_progress, transitions) == (CLOSED, 1, [])


# ---------------------------------------------------------------- the state file's JSON


def every_field_set() -> Breaker:
    return Breaker(
        state=OPEN,
        no_progress=3,
        same_error=2,
        failures=4,
        denial_streak=1,
        last_fingerprint="abc123",
        last_error="ImportError: ünïcode x",
        denied=("Bash(git push)", "Write"),
        reason="no progress in 3 iterations in a row",
        last_change=datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC),
        opened_at=datetime(2026, 2, 3, 4, 5, 7, tzinfo=UTC),
        last_progress_iteration=17,
        total_opens=5,
        probation=True,
    )


def test_to_json_has_the_seed_fields_and_ours() -> None:
    data = every_field_set().to_json(21)
    assert data == {
        "state": "OPEN",
        "last_change": "2026-02-03T04:05:06Z",
        "consecutive_no_progress": 3,
        "consecutive_churn": 0,
        "consecutive_same_error": 2,
        "consecutive_failures": 4,
        "consecutive_permission_denials": 1,
        "last_progress_loop": 17,
        "total_opens": 5,
        "reason": "no progress in 3 iterations in a row",
        "current_loop": 21,
        "opened_at": "2026-02-03T04:05:07Z",
        "last_error": "ImportError: ünïcode x",
        "last_error_fingerprint": "abc123",
        "denied_commands": ["Bash(git push)", "Write"],
        "probation": True,
    }


def test_to_json_from_json_round_trips_every_field() -> None:
    breaker = every_field_set()
    assert Breaker.from_json(breaker.to_json(21)) == breaker
    for state in CircuitState:
        assert Breaker.from_json(replace(breaker, state=state).to_json(1)).state is state


def test_to_json_from_json_round_trips_a_fresh_breaker() -> None:
    data = Breaker().to_json(0)
    assert data["last_change"] is None
    assert data["opened_at"] is None
    assert Breaker.from_json(data) == Breaker()


def test_from_json_fills_missing_optional_fields() -> None:
    assert Breaker.from_json({"state": "HALF_OPEN"}) == Breaker(state=HALF_OPEN)


def test_timestamps_are_written_in_utc() -> None:
    from datetime import timezone

    plus_two = timezone(timedelta(hours=2))
    breaker = Breaker(last_change=datetime(2026, 1, 1, 14, 0, 0, tzinfo=plus_two))
    data = breaker.to_json(1)
    assert data["last_change"] == "2026-01-01T12:00:00Z"
    assert Breaker.from_json(data).last_change == datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def test_transition_to_json() -> None:
    transition = Transition(at(0), 7, HALF_OPEN, OPEN, "no progress in 3 iterations in a row")
    assert transition.to_json() == {
        "timestamp": "2026-01-01T12:00:00Z",
        "loop": 7,
        "from_state": "HALF_OPEN",
        "to_state": "OPEN",
        "reason": "no progress in 3 iterations in a row",
    }


GOOD: dict[str, Any] = every_field_set().to_json(21)


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"state": "AJAR"}, ValueError),
        ({"state": "open"}, ValueError),
        ({"state": None}, ValueError),
        ({"consecutive_no_progress": -1}, ValueError),
        ({"consecutive_no_progress": "3"}, ValueError),
        ({"consecutive_no_progress": 1.5}, ValueError),
        ({"consecutive_same_error": True}, ValueError),
        ({"consecutive_failures": None}, ValueError),
        ({"consecutive_permission_denials": [1]}, ValueError),
        ({"last_progress_loop": -3}, ValueError),
        ({"total_opens": "many"}, ValueError),
        ({"denied_commands": "Bash(rm)"}, ValueError),
        ({"denied_commands": {"a": 1}}, ValueError),
        ({"last_change": 1735732800}, ValueError),
        ({"opened_at": "yesterday"}, ValueError),
        ({"opened_at": ["2026-01-01T00:00:00Z"]}, ValueError),
    ],
)
def test_from_json_rejects_bad_fields(changes: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        Breaker.from_json({**GOOD, **changes})


def test_from_json_rejects_a_missing_state() -> None:
    data = dict(GOOD)
    del data["state"]
    with pytest.raises(KeyError):
        Breaker.from_json(data)


def test_from_json_raises_only_the_documented_errors_on_junk() -> None:
    for junk in ({"state": 3}, {"state": ["OPEN"]}, {"state": "OPEN", "total_opens": {}}):
        with pytest.raises((ValueError, TypeError, KeyError)):
            Breaker.from_json(junk)


def test_from_json_rejects_a_probation_that_is_not_a_bool() -> None:
    with pytest.raises((ValueError, TypeError)):
        Breaker.from_json({**GOOD, "probation": "false"})


def test_a_loaded_timestamp_without_a_zone_does_not_crash_the_cooldown() -> None:
    try:
        breaker = Breaker.from_json({"state": "OPEN", "opened_at": "2026-01-01T12:00:00"})
    except ValueError:
        return  # rejecting it at load time is as good: load_breaker turns that into a RalphError
    later, _ = breaker.before_iteration(BreakerConfig(cooldown_s=60), at(3600), 1)
    assert later.state is HALF_OPEN


# ---------------------------------------------------------------- guidance


def test_guidance_names_the_reason_and_the_reset_command() -> None:
    breaker, _ = run(idle(n) for n in range(1, 4))
    text = guidance(breaker, "-f login-page")
    assert text.startswith("Circuit breaker OPEN: no progress in 3 iterations in a row")
    assert "ralph reset-circuit -f login-page" in text
    assert "ralph status -f login-page" in text
    assert "allowed_tools" not in text  # no denials, no advice about them
    found_anyway = guidance(breaker, "")  # a root workspace that needs no -f
    assert "ralph reset-circuit   (or: ralph run --reset-circuit)" in found_anyway
    same = guidance(breaker, "-f x", "ralph run -f x --agent-cmd 'my agent' -n 5")
    assert "(or: ralph run -f x --agent-cmd 'my agent' -n 5 --reset-circuit)" in same
    assert "(ralph status)" in found_anyway


def test_guidance_mentions_denials_and_the_last_error() -> None:
    breaker, _ = run([denied(1, "Bash(git push)"), denied(2, "Bash(git push)")])
    text = guidance(breaker, "-f feat")
    assert "Bash(git push)" in text
    assert "claude.allowed_tools" in text
    assert "ralph reset-circuit -f feat" in text

    breaker, _ = run(failed(n, "TypeError: cannot add int and str\n  at line 3", "fp") for n in range(1, 6))
    text = guidance(breaker, "-f feat")
    assert "the last error: TypeError: cannot add int and str at line 3" in text
    assert breaker.reason in text


def test_guidance_shortens_a_long_error() -> None:
    breaker = Breaker(state=OPEN, reason="x", last_error="E" * 5000)
    line = next(line for line in guidance(breaker, "f").splitlines() if "the last error" in line)
    assert len(line) < 300
    assert line.endswith("…")


# ---------------------------------------------------------------- properties


@dataclass
class Model:
    """An independent reading of the documented rules, counter by counter."""

    no_progress: int = 0
    failures: int = 0
    same_error: int = 0
    fingerprint: str | None = None
    denials: int = 0

    def count(self, facts: IterationFacts) -> bool:
        """Count one iteration; whether it made progress."""
        progressed = facts.progress and not facts.failed
        if progressed:
            self.no_progress = 0
        elif not facts.failed:
            self.no_progress += 1
        self.failures = self.failures + 1 if facts.failed else 0
        if facts.fingerprint is None:
            self.same_error = 0
        else:
            self.same_error = self.same_error + 1 if facts.fingerprint == self.fingerprint else 1
        self.fingerprint = facts.fingerprint
        self.denials = self.denials + 1 if facts.denials else 0
        return progressed

    def must_open(self, config: BreakerConfig) -> bool:
        return (
            self.no_progress >= config.no_progress_threshold
            or self.same_error >= config.same_error_threshold
            or self.failures >= config.failure_threshold
            or self.denials >= config.denial_threshold
        )


fact_shapes = st.tuples(
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "fp-a", "fp-b"]),
    st.lists(st.sampled_from(["Bash(rm)", "Write", "WebFetch"]), max_size=2),
)

configs = st.builds(
    BreakerConfig,
    no_progress_threshold=st.integers(1, 6),
    half_open_after=st.integers(1, 6),
    same_error_threshold=st.integers(1, 6),
    failure_threshold=st.integers(1, 6),
    denial_threshold=st.integers(1, 4),
)


def make_facts(n: int, shape: tuple[bool, bool, str | None, list[str]]) -> IterationFacts:
    progress, did_fail, fingerprint, denials = shape
    return IterationFacts(
        iteration=n,
        progress=progress,
        failed=did_fail,
        error=f"error {fingerprint}" if fingerprint else None,
        fingerprint=fingerprint,
        denials=tuple(denials),
    )


@given(shapes=st.lists(fact_shapes, max_size=40), config=st.one_of(st.just(DEFAULT), configs))
def test_open_iff_a_documented_condition_held_at_the_last_transition(
    shapes: list[tuple[bool, bool, str | None, list[str]]], config: BreakerConfig
) -> None:
    breaker = Breaker()
    model = Model()
    last: Transition | None = None
    condition_at_last = False
    opens = 0
    for n, shape in enumerate(shapes, start=1):
        facts = make_facts(n, shape)
        before = breaker
        breaker, transition = breaker.after(facts, config, at(60 * n))
        progressed = model.count(facts)
        must_open = model.must_open(config)

        # the reported transition is exactly the state change
        if breaker.state is before.state:
            assert transition is None
        else:
            assert transition is not None
            assert (transition.from_state, transition.to_state) == (before.state, breaker.state)
            assert (transition.iteration, transition.at) == (n, at(60 * n))
            assert transition.reason == breaker.reason
            last, condition_at_last = transition, must_open
            opens += breaker.is_open

        # counters: never negative, and exactly the documented streaks
        counts = (breaker.no_progress, breaker.failures, breaker.same_error, breaker.denial_streak)
        assert min(counts) >= 0
        assert counts == (model.no_progress, model.failures, model.same_error, model.denials)

        # OPEN iff a documented condition held when it last changed state
        if must_open:
            assert breaker.is_open
        assert breaker.is_open == (last is not None and last.to_state is OPEN and condition_at_last)
        if breaker.is_open:
            assert last is not None
            assert breaker.opened_at == last.at

        # the other states
        if not must_open and not before.is_open:
            if progressed:
                assert breaker.state is CLOSED
            elif before.state is CLOSED:
                expected = HALF_OPEN if model.no_progress >= config.half_open_after else CLOSED
                assert breaker.state is expected
            else:
                assert breaker.state is HALF_OPEN
        if breaker.state is CLOSED:
            assert breaker.reason == (transition.reason if transition else "")
        assert breaker.total_opens == opens


@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("iteration"), fact_shapes),
            st.tuples(st.just("wait"), st.integers(0, 3600)),
            st.tuples(st.just("reset"), st.none()),
        ),
        max_size=40,
    ),
    cooldown=st.sampled_from([None, 60.0, 1800.0]),
)
def test_with_cooldowns_and_resets_transitions_are_the_state_changes(
    steps: list[tuple[str, Any]], cooldown: float | None
) -> None:
    """The loop's own order: before_iteration, then (unless still OPEN) the iteration; resets at any time."""
    config = BreakerConfig(cooldown_s=cooldown)
    breaker = Breaker()
    clock = 0
    iteration = 0
    opens = 0
    for kind, value in steps:
        previous = breaker.state
        if kind == "wait":
            clock += value
            continue
        if kind == "reset":
            breaker, reset = breaker.reset("property", at(clock), iteration)
            assert (reset.from_state, reset.to_state) == (previous, CLOSED)
            assert (breaker.no_progress, breaker.failures, breaker.same_error, breaker.denial_streak) == (0, 0, 0, 0)
            assert breaker.probation is False
            continue
        breaker, transition = breaker.before_iteration(config, at(clock), iteration + 1)
        if transition is None:
            assert breaker.state is previous
        else:
            assert (previous, breaker.state, transition.from_state, transition.to_state) == (
                OPEN,
                HALF_OPEN,
                OPEN,
                HALF_OPEN,
            )
            assert cooldown is not None
            assert breaker.probation
            assert (breaker.no_progress, breaker.failures, breaker.same_error, breaker.denial_streak) == (0, 0, 0, 0)
        if breaker.is_open:
            assert cooldown is None or breaker.cooldown_left(config, at(clock)) > 0
            continue  # the loop waits or halts: no iteration runs while OPEN
        iteration += 1
        facts = make_facts(iteration, value)
        on_probation = breaker.probation
        previous = breaker.state
        breaker, transition = breaker.after(facts, config, at(clock))
        if breaker.state is previous:
            assert transition is None
        else:
            assert transition is not None
            assert (transition.from_state, transition.to_state) == (previous, breaker.state)
        if breaker.is_open and transition is not None:
            opens += 1
        assert min(breaker.no_progress, breaker.failures, breaker.same_error, breaker.denial_streak) >= 0
        if on_probation:
            progressed = facts.progress and not facts.failed
            # probation lasts one iteration: progress closes (unless a threshold is hit), anything else reopens
            assert breaker.state is not HALF_OPEN
            if not progressed:
                assert breaker.is_open
        assert not (breaker.probation and breaker.state is not HALF_OPEN)
    assert breaker.total_opens == opens
