"""The rows for an agent that cannot work (stop at once) and an API that is down (back off, then give up)."""

from __future__ import annotations

from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.decide import Action, decide
from tests.engine.test_decide_rows import base


def test_a_fatal_agent_error_halts_at_once_with_its_fix() -> None:
    decision = decide(base(agent_fatal="Claude Code cannot authenticate (Invalid API key). Fix: run claude /login"))
    assert (decision.action, decision.reason) == (Action.HALT, ExitReason.AGENT_ERROR)
    assert decision.message.endswith("Fix: run claude /login")
    assert ExitReason.AGENT_ERROR.exit_code == 1 and ExitReason.AGENT_ERROR.status == "failed"


def test_a_fatal_error_wins_over_open_retries_and_iterations_left() -> None:
    decision = decide(base(agent_fatal="no credit", task_failed="x", attempt=1, iterations_run=1))
    assert decision.reason is ExitReason.AGENT_ERROR


def test_interrupt_and_usage_limit_come_before_agent_errors() -> None:
    assert decide(base(agent_fatal="auth", interrupted=True)).reason is ExitReason.INTERRUPTED
    limited = decide(base(usage_limit="5-hour limit", usage_action="exit", agent_fatal="auth"))
    assert limited.reason is ExitReason.USAGE_LIMIT


def test_a_transient_error_retries_after_the_backoff_without_halting() -> None:
    decision = decide(base(transient_error="the Anthropic API is overloaded", transient_retry=2, transient_wait_s=10.0))
    assert decision.action is Action.RETRY and decision.reason is None
    assert decision.wait_s == 10.0
    assert "retrying in 10s (attempt 2/10)" in decision.message


def test_a_transient_error_past_the_last_retry_halts_as_agent_error() -> None:
    decision = decide(base(transient_error="unreachable", transient_retry=11, transient_retries=10))
    assert (decision.action, decision.reason) == (Action.HALT, ExitReason.AGENT_ERROR)
    assert decision.message == "unreachable (still failing after 10 retries)"
    assert decide(base(transient_error="unreachable", transient_retry=10, transient_retries=10)).action is Action.RETRY


def test_a_transient_error_is_retried_even_at_max_iterations() -> None:
    """It is not counted: the iteration the user paid for has not happened yet."""
    decision = decide(base(transient_error="overloaded", transient_retry=1, iterations_run=10, max_iterations=10))
    assert decision.action is Action.RETRY
