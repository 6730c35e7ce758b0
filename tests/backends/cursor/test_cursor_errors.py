"""Cursor's failure classes from its stderr (agents/cursor/errors.py): texts of real runs from public bug reports,
and the shapes Cursor's documentation gives errors (a non-zero exit, a message on stderr)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.agents.cursor.errors import classify, first_error
from ralphloop.core.protocols import ErrorKind

FIXTURES = Path(__file__).parents[2] / "fixtures" / "cursor"


@pytest.mark.parametrize(
    ("stderr", "kind"),
    [
        ((FIXTURES / "report_usage_limit" / "stderr").read_text(), ErrorKind.BILLING),
        ("Error: You’ve hit your usage limit\n  spendLimitHit: true\n", ErrorKind.BILLING),
        ((FIXTURES / "report_auth_required" / "stderr").read_text(), ErrorKind.AUTH),
        ("Error: Not logged in\n", ErrorKind.AUTH),
        ("[unauthenticated] Error\n", ErrorKind.AUTH),
        ("Error: Cannot use this model: gpt-9. Available models: auto, sonnet-4\n", ErrorKind.BAD_MODEL),
        ("error: unknown option '--trust'\n", ErrorKind.REFUSED),
        ("Error: Rate limit exceeded, please slow down\n", ErrorKind.RATE_LIMITED),
        ("Error: [resource_exhausted] Too Many Requests\n", ErrorKind.RATE_LIMITED),
        ("Error: The model provider is overloaded\n", ErrorKind.OVERLOADED),
        ("Error: 503 Service Unavailable\n", ErrorKind.OVERLOADED),
        ("Error: fetch failed (ECONNREFUSED 127.0.0.1:443)\n", ErrorKind.NETWORK),
        ("Error: getaddrinfo ENOTFOUND api2.cursor.sh\n", ErrorKind.NETWORK),
    ],
)
def test_cursors_stderr_has_its_kind(stderr: str, kind: ErrorKind) -> None:
    found = classify(stderr)
    assert found is not None and found[0] is kind


@pytest.mark.parametrize("stderr", ["", "\n\n", "Error: the tests failed\n", "warning: something\n"])
def test_other_failures_are_the_tasks_own(stderr: str) -> None:
    assert classify(stderr) is None


def test_the_limit_message_carries_the_cycles_end_and_the_fix() -> None:
    found = classify((FIXTURES / "report_usage_limit" / "stderr").read_text())
    assert found is not None
    assert "You've hit your usage limit" in found[1] and "11/17/2025" in found[1] and "cursor.com/dashboard" in found[1]


def test_the_error_line_is_found() -> None:
    assert first_error("noise\nError: Authentication required. Run `agent login`.\nmore\n") == (
        "Authentication required. Run `agent login`."
    )
    assert first_error("only this\n") == "only this"
    assert first_error("") == ""
