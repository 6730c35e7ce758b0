"""The copilot backend's error classes, from Copilot 1.0.102's own error events and sentences."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ralphloop.agents.copilot.errors import CopilotError, classify, reset_in
from ralphloop.core.protocols import ErrorKind

NOW = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (CopilotError("Authentication failed with provider (HTTP 401).", "authentication", status=401), ErrorKind.AUTH),
        (CopilotError("403 Forbidden", "authorization", status=403), ErrorKind.AUTH),
        (CopilotError("Classic Personal Access Tokens (ghp_) are not supported by Copilot."), ErrorKind.AUTH),
        (CopilotError("Blocked by your organization", "policy"), ErrorKind.REFUSED),
        (
            CopilotError("429 Sorry, you have been rate-limited.", "rate_limit", "rate_limited", 429),
            ErrorKind.RATE_LIMITED,
        ),
        (CopilotError("429 Too many requests", "rate_limit", "integration_rate_limited", 429), ErrorKind.RATE_LIMITED),
        (
            CopilotError("You've hit your rate limit. Please wait for your limit to reset", "rate_limit"),
            ErrorKind.USAGE_LIMIT,
        ),
        (
            CopilotError("You've reached your weekly rate limit.", "rate_limit", "user_weekly_rate_limited"),
            ErrorKind.USAGE_LIMIT,
        ),
        (
            CopilotError("You've run out of your included AI credits for the month.", "quota", "quota_exceeded"),
            ErrorKind.BILLING,
        ),
        (CopilotError("402 quota", "query", status=402), ErrorKind.BILLING),
        (
            CopilotError("You've reached the spending limit for this session.", "quota", "session_quota_exceeded"),
            ErrorKind.BUDGET,
        ),
        (
            CopilotError("Model 'gpt-9' not found on provider at http://x/v1 (HTTP 404).", "query", status=404),
            ErrorKind.BAD_MODEL,
        ),
        (CopilotError("No supported model available: gpt-9"), ErrorKind.BAD_MODEL),
        (
            CopilotError(
                "Failed to get response from the AI model; retried 5 times Last error: 500 Internal",
                "query",
                status=500,
            ),
            ErrorKind.OVERLOADED,
        ),
        (CopilotError("Failed to fetch PAT user login: network fetch failed"), ErrorKind.NETWORK),
    ],
)
def test_copilot_errors_have_their_kinds(error: CopilotError, kind: ErrorKind) -> None:
    found = classify(error, NOW)
    assert found is not None and found.kind is kind
    assert (found.limit is not None) == (kind is ErrorKind.USAGE_LIMIT)


def test_an_ordinary_error_is_the_tasks_failure() -> None:
    assert classify(CopilotError("The conversation is too long", "context_limit"), NOW) is None
    assert classify(CopilotError("Something odd happened", "query"), NOW) is None
    assert classify(CopilotError(""), NOW) is None


@pytest.mark.parametrize(
    ("said", "reset"),
    [
        ("429 Please try again in 2 hours.", datetime(2026, 11, 27, 16, 0, tzinfo=UTC)),
        ("429 Try again in 1 day 3 hours", datetime(2026, 11, 28, 17, 0, tzinfo=UTC)),
        ("Your limit resets at 2026-11-28T00:00:00Z.", datetime(2026, 11, 28, 0, 0, tzinfo=UTC)),
        ("Limit reached (current limit resets in ~45 minutes)", datetime(2026, 11, 27, 14, 45, tzinfo=UTC)),
        ("Rate limit. Try again at 8pm.", datetime(2026, 11, 27, 20, 0, tzinfo=UTC)),  # a clock time is UTC
        ("429 Sorry, you have been rate-limited.", None),
    ],
)
def test_the_reset_is_read_as_an_instant(said: str, reset: datetime | None) -> None:
    assert reset_in(said, NOW) == reset


def test_a_rate_limit_that_lasts_is_the_usage_limit_and_a_short_one_is_not() -> None:
    lasting = classify(CopilotError("429 Please try again in 2 hours.", "rate_limit", status=429), NOW)
    assert lasting is not None and lasting.kind is ErrorKind.USAGE_LIMIT and lasting.limit is not None
    assert lasting.limit.resets_at == datetime(2026, 11, 27, 16, 0, tzinfo=UTC)
    assert lasting.limit.message == "Please try again in 2 hours."
    short = classify(CopilotError("429 Please try again in 30 seconds.", "rate_limit", status=429), NOW)
    assert short is not None and short.kind is ErrorKind.RATE_LIMITED


def test_a_quota_with_a_reset_is_the_usage_limit() -> None:
    found = classify(CopilotError("402 quota_exceeded: resets at 2026-12-01T00:00:00Z", "quota"), NOW)
    assert found is not None and found.kind is ErrorKind.USAGE_LIMIT and found.limit is not None
    assert found.limit.kind == "monthly" and found.limit.resets_at == datetime(2026, 12, 1, tzinfo=UTC)
