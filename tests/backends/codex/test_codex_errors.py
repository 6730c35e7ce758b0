"""The codex backend's error classes and usage-limit sentences, in Codex's own wordings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ralphloop.agents.codex.errors import classify
from ralphloop.agents.codex.parser import CodexJsonParser
from ralphloop.core.protocols import ErrorKind, ProcessOutcome

NOW = datetime(2026, 11, 20, 23, 4, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("unexpected status 401 Unauthorized: Incorrect API key provided: sk-fake.", ErrorKind.AUTH),
        ("unexpected status 403 Forbidden", ErrorKind.AUTH),
        ("Quota exceeded. Check your plan and billing details.", ErrorKind.BILLING),
        ("exceeded retry limit, last status: 429 Too Many Requests, request id: x", ErrorKind.RATE_LIMITED),
        ("We’re currently experiencing high demand, which may cause temporary errors.", ErrorKind.OVERLOADED),
        ("unexpected status 502 Bad Gateway", ErrorKind.OVERLOADED),
        ("stream disconnected before completion: error sending request", ErrorKind.NETWORK),
        ("unexpected status 404 Not Found: The model `gpt-9` does not exist", ErrorKind.BAD_MODEL),
    ],
)
def test_codex_messages_have_their_kinds(said: str, kind: ErrorKind) -> None:
    found = classify(said)
    assert found is not None and found[0] is kind


def test_an_unknown_message_is_the_tasks_failure() -> None:
    assert classify("apply_patch verification failed") is None
    assert classify("") is None


def failed_with(message: str) -> CodexJsonParser:
    parser = CodexJsonParser(NOW)
    line = '{"type":"turn.failed","error":{"message":' + __import__("json").dumps(message) + "}}\n"
    parser.feed(line.encode())
    return parser


@pytest.mark.parametrize(
    ("sentence", "reset"),
    [
        ("You’ve hit your usage limit. Try again in 2 days 17 hours.", datetime(2026, 11, 23, 16, 4, tzinfo=UTC)),
        (
            "You've hit your usage limit. Upgrade to Pro or try again in 3 hours 5 minutes.",
            datetime(2026, 11, 21, 2, 9, tzinfo=UTC),
        ),
        (
            "You’ve hit your usage limit. Visit x or try again at Nov 21st, 2026 1:04 AM.",
            datetime(2026, 11, 21, 1, 4, tzinfo=UTC),
        ),
        ("You've hit your usage limit. Try again at 11:30 PM.", datetime(2026, 11, 20, 23, 30, tzinfo=UTC)),  # today
    ],
)
def test_the_reset_in_both_forms_and_both_apostrophes(sentence: str, reset: datetime) -> None:
    result = failed_with(sentence).finish(ProcessOutcome(exit_code=1, duration_s=1.0))
    assert result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None and result.usage_limit.resets_at == reset


def test_a_limit_without_a_reset_is_still_the_usage_limit() -> None:
    result = failed_with("You’ve hit your usage limit. Try again later.").finish(
        ProcessOutcome(exit_code=1, duration_s=1)
    )
    assert result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None and result.usage_limit.resets_at is None
