"""Amp's failure classes from its own messages (agents/amp/errors.py): the texts of Amp 0.0.1790142911's source
and of the real CLI's stderr (tests/fixtures/amp/)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ralphloop.agents.amp.errors import approvals_refused, classify, free_tier_limit, stderr_error
from ralphloop.core.protocols import ErrorKind


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("Invalid or missing API key. Run 'amp login' to authenticate.", ErrorKind.AUTH),
        ("Access token expired. Run 'amp login' to refresh.", ErrorKind.AUTH),
        ("Session expired and could not be refreshed. Run 'amp login' to authenticate.", ErrorKind.AUTH),
        ("AMP_API_KEY holds an OAuth session token, which is short-lived.", ErrorKind.AUTH),
        ("Not logged in. Run 'amp login' to authenticate.", ErrorKind.AUTH),
        ("Login failed: That code looks incomplete.", ErrorKind.AUTH),
        ("Unauthorized 401 invalid x-api-key", ErrorKind.AUTH),
        ("Authenticated, but your account is not authorized to perform this action.", ErrorKind.AUTH),
        ("Out of Credits Add credits to keep using Amp.", ErrorKind.BILLING),
        ("Low Credit Balance Your Amp credit balance is low.", ErrorKind.BILLING),
        (
            "No Usage Available Your included Gigawatt usage is at its monthly limit, and no paid credits are "
            "available. Add paid credits to continue now.",
            ErrorKind.BILLING,
        ),
        ("You need $0.50 in available credits to start this request", ErrorKind.BILLING),
        ("You've exceeded your usage quota of $100 for this month.", ErrorKind.BILLING),
        ("API request for getUserInfo failed: 402", ErrorKind.BILLING),
        ("You've reached your free usage limit.", ErrorKind.USAGE_LIMIT),
        ("Model Not Found model: gpt-9", ErrorKind.BAD_MODEL),
        ('Agent mode "h" is ambiguous; it matches High (key: high), Huge (key: huge).', ErrorKind.BAD_MODEL),
        ("Agent Mode Disabled Ultra mode has been disabled by your workspace admin.", ErrorKind.BAD_MODEL),
        ("The --model flag is not enabled for your account.", ErrorKind.BAD_MODEL),
        ("error: unknown option '--full-auto'", ErrorKind.REFUSED),
        ("Invalid flag \"--x\". See 'amp --help' for valid options.", ErrorKind.REFUSED),
        ("The --stats and --stream-json flags are mutually exclusive output formats", ErrorKind.REFUSED),
        ("User message must be provided through stdin or as argument when using execute mode", ErrorKind.REFUSED),
        ("API request for getUserInfo failed: 429", ErrorKind.RATE_LIMITED),
        ("Rate limit exceeded. Try again shortly.", ErrorKind.RATE_LIMITED),
        ("Model Provider Overloaded Try again in a few seconds.", ErrorKind.OVERLOADED),
        ("Amp server returned an error. Try again in a moment.", ErrorKind.OVERLOADED),
        ("Model Stream Timed Out The model stopped sending data before finishing.", ErrorKind.OVERLOADED),
        ("API request for getUserInfo failed: 503", ErrorKind.OVERLOADED),
        ("Couldn't connect to the Amp server at https://ampcode.com.", ErrorKind.NETWORK),
        ("Network Error Cannot reach Amp servers. Check your internet connection and try again.", ErrorKind.NETWORK),
        ("Unable to connect to Amp servers after multiple attempts", ErrorKind.NETWORK),
        ("WebSocket connection failed. Check your connection or proxy settings and retry.", ErrorKind.NETWORK),
    ],
)
def test_amps_own_messages_have_their_kind(said: str, kind: ErrorKind) -> None:
    found = classify(said)
    assert found is not None and found[0] is kind


@pytest.mark.parametrize(
    "said",
    [
        "",
        "   ",
        "Context Limit Reached This conversation has reached the context window limit.",
        "The following tools require user approval, which is not supported in stream JSON mode: Bash",
        "User cancelled (SIGINT/SIGTERM)",
        'The last "Bash" tool call failed: exit 1',
    ],
)
def test_other_failures_are_the_tasks_own(said: str) -> None:
    assert classify(said) is None


def test_each_kind_says_what_to_do() -> None:
    assert "amp login" in classify("Invalid or missing API key.")[1]  # type: ignore[index]
    assert "ampcode.com/pay" in classify("Out of Credits Add credits to keep using Amp.")[1]  # type: ignore[index]
    assert "--model" in classify("Model Not Found x")[1]  # type: ignore[index]


@pytest.mark.parametrize(
    ("now", "reset"),
    [
        (datetime(2026, 11, 27, 14, 37, 12, 5, tzinfo=UTC), datetime(2026, 11, 27, 15, tzinfo=UTC)),
        (datetime(2026, 11, 27, 14, 0, tzinfo=UTC), datetime(2026, 11, 27, 15, tzinfo=UTC)),
        (datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC), datetime(2027, 1, 1, 0, tzinfo=UTC)),
    ],
)
def test_the_free_tier_refills_when_the_next_hour_starts(now: datetime, reset: datetime) -> None:
    limit = free_tier_limit("You've reached your free usage limit.", now)
    assert limit.resets_at == reset and limit.message == "You've reached your free usage limit."


def test_the_tools_amp_refused_are_named() -> None:
    text = "The following tools require user approval, which is not supported in stream JSON mode: Bash, edit_file"
    assert approvals_refused(text) == ("Bash", "edit_file")
    assert approvals_refused("A tool requires user approval, which is not supported in stream JSON mode") == ("a tool",)
    assert approvals_refused("Out of Credits") == ()
    stderr = (
        "Error: The Bash tool tried to run a command that isn't allowlisted. Rerun with --dangerously-allow-all to "
        "bypass, or add to the command allowlist in permissions (https://ampcode.com/docs/tools#permissions).\n"
        "Error: The edit_file tool wants to modify a guarded file (/p/.env), but no interactive UI is available.\n"
    )
    assert approvals_refused(stderr) == ("Bash", "edit_file")
    assert classify(stderr_error(stderr)) is None  # a refused tool is not a service failure


def test_the_clis_error_line_is_found_among_its_advice() -> None:
    stderr = "Error: Couldn't connect to the Amp server at http://amp.invalid.\n\nCheck your network connection.\n"
    assert stderr_error(stderr) == "Couldn't connect to the Amp server at http://amp.invalid."
    assert stderr_error("Error: error: unknown option '--full-auto'\n") == "unknown option '--full-auto'"
    assert stderr_error("\nLogin failed: That code looks incomplete.\n") == "Login failed: That code looks incomplete."
    assert stderr_error("something odd\n") == "something odd"
    assert stderr_error("") == ""
