"""opencode's errors: the kinds its `error` events and log lines state, a usage limit's reset from the provider's
headers, and the log lines themselves (real lines of opencode 1.18.33, and what a broken or hostile one may hold)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.agents.opencode import log_lines
from ralphloop.agents.opencode.errors import from_event, from_text
from ralphloop.agents.opencode.limits import reset_from_headers, usage_limit
from ralphloop.core.protocols import ErrorKind

AT = datetime(2026, 11, 27, 15, 3, 47, tzinfo=UTC)
DATE = "Fri, 27 Nov 2026 15:03:47 GMT"  # the same instant, as the provider's `date` header
FAILED = (
    "timestamp=2026-11-27T14:56:41.376Z level=ERROR run=94991db7 message=failed ref=err_9021620b "
    'error="ProviderModelNotFoundError: Model not found: fake/nope." '
    'cause="ProviderModelNotFoundError: Model not found: fake/nope.\\n    at <anonymous> (/$bunfs/root/chunk.js:1:2)"'
)
CATALOGUE = (
    'timestamp=2026-11-20T23:13:02.043Z level=ERROR run=38f13347 message="Failed to fetch models.dev" '
    'cause="Cause([Fail(HttpClientError: Transport error (GET https://models.opencode.ai/api.json))])"'
)


def api_error(status: int | None, message: str, body: str = "", **headers: str) -> dict[str, object]:
    data: dict[str, object] = {"message": message, "isRetryable": True, "responseBody": body}
    if status is not None:
        data["statusCode"] = status
    data["responseHeaders"] = {"date": DATE, **{key.replace("_", "-"): value for key, value in headers.items()}}
    return {"name": "APIError", "data": data}


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (api_error(401, "Incorrect API key provided."), ErrorKind.AUTH),
        (api_error(403, "Forbidden"), ErrorKind.AUTH),
        ({"name": "ProviderAuthError", "data": {"providerID": "anthropic", "message": "No API key"}}, ErrorKind.AUTH),
        (api_error(400, "Your credit balance is too low to access the Anthropic API."), ErrorKind.BILLING),
        (
            api_error(429, "You exceeded your current quota, please check your plan and billing details."),
            ErrorKind.BILLING,
        ),
        (api_error(404, "The model `x` does not exist or you do not have access to it."), ErrorKind.BAD_MODEL),
        (api_error(429, "Rate limit reached for requests."), ErrorKind.RATE_LIMITED),
        (api_error(529, "Overloaded"), ErrorKind.OVERLOADED),
        (api_error(503, "upstream unavailable"), ErrorKind.OVERLOADED),
        (
            api_error(None, "Cannot connect to API: Unable to connect. Is the computer able to access the url?"),
            ErrorKind.NETWORK,
        ),
    ],
)
def test_error_events_have_their_kinds(error: dict[str, object], kind: ErrorKind) -> None:
    assert from_event(error, AT, "").kind is kind


def test_an_unknown_error_is_named_by_its_log_line() -> None:
    error = {
        "name": "UnknownError",
        "data": {"message": "Unexpected server error. Check server logs for details.", "ref": "err_9021620b"},
    }
    found = from_event(error, AT, f"{CATALOGUE}\n{FAILED}\n")
    assert found.kind is ErrorKind.BAD_MODEL and "Model not found: fake/nope." in found.message
    # Without its log line (another ref, or none) it is an ordinary failed attempt that says what opencode said.
    other = from_event(error, AT, FAILED.replace("err_9021620b", "err_other"))
    assert other.kind is None and other.message == (
        "opencode reported an error: UnknownError: Unexpected server error. Check server logs for details."
    )


@pytest.mark.parametrize(
    "error",
    [
        {"name": "ContextOverflowError", "data": {"message": "prompt is too long"}},
        {"name": "MessageOutputLengthError", "data": {}},
        {"name": "StructuredOutputError"},
        "not a mapping",
        {"data": "not a mapping"},
        api_error(400, "Invalid value for 'tools'"),
    ],
)
def test_the_tasks_own_failures_have_no_kind(error: object) -> None:
    found = from_event(error, AT, "")
    assert found.kind is None and found.message.startswith("opencode reported an error: ")


def test_text_alone_states_no_kind_unless_it_names_one() -> None:
    assert from_text("") is None
    assert from_text("something odd happened") is None
    found = from_text("AI_APICallError: Too Many Requests")
    assert found is not None and found.kind is ErrorKind.RATE_LIMITED


# ---------------------------------------------------------------- usage limits and their resets


@pytest.mark.parametrize(
    ("headers", "reset"),
    [
        ({"x-ratelimit-reset": "1795838400"}, datetime(2026, 11, 28, 4, tzinfo=UTC)),
        ({"x-ratelimit-reset": "1795838400000"}, datetime(2026, 11, 28, 4, tzinfo=UTC)),  # milliseconds
        ({"anthropic-ratelimit-unified-reset": "1795838400"}, datetime(2026, 11, 28, 4, tzinfo=UTC)),
        ({"retry-after": "7200"}, AT + timedelta(hours=2)),
        ({"retry-after": "Fri, 27 Nov 2026 20:00:00 GMT"}, datetime(2026, 11, 27, 20, tzinfo=UTC)),
        ({"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "20s"}, AT + timedelta(minutes=6)),
        ({"retry-after": "60", "x-ratelimit-reset": "1795838400"}, datetime(2026, 11, 28, 4, tzinfo=UTC)),  # the latest
    ],
)
def test_the_reset_from_the_headers(headers: dict[str, str], reset: datetime) -> None:
    assert reset_from_headers(headers, AT) == reset


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"retry-after-ms": "0"},  # a hint for the next attempt, not a reset
        {"retry-after": "-5"},
        {"retry-after": "soon"},
        {"x-ratelimit-reset": "99999999999999999999"},
        {"x-ratelimit-reset": "1500000000"},  # long past
        {"retry-after": "1e308"},
        {"retry-after": "9" * 5000},
    ],
)
def test_no_reset_from_absent_or_absurd_headers(headers: dict[str, str]) -> None:
    assert reset_from_headers(headers, AT) is None


def test_a_usage_limit_needs_a_429_that_says_so() -> None:
    body = '{"error": {"type": "usage_limit_reached", "message": "Usage limit reached."}}'
    limit = usage_limit(429, "Usage limit reached.", body, {"date": DATE, "retry-after": "3600"}, AT)
    assert limit is not None and limit.resets_at == AT + timedelta(hours=1) and limit.vendor == "opencode"
    assert usage_limit(429, "Rate limit reached for requests.", "", {"retry-after": "3600"}, AT) is None
    assert usage_limit(403, "Usage limit reached.", body, {}, AT) is None
    rejected = usage_limit(429, "Error", "", {"anthropic-ratelimit-unified-status": "rejected"}, AT)
    assert rejected is not None and rejected.resets_at is None  # a limit without a reset: the fallback wait


# OpenAI's usage limit as the Responses API states it (tests/fixtures/opencode/usage_limit_plus_json): the body's
# `resets_at` and `resets_in_seconds`, and a window per `x-codex-*` header set, only the used-up one the limit's.
OPENAI_BODY = (
    '{"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached", '
    '"plan_type": "plus", "resets_at": 1795223715, "resets_in_seconds": 7200}}'
)
CODEX_WINDOWS = {
    "x-codex-primary-reset-at": "1795223715",
    "x-codex-primary-used-percent": "100",
    "x-codex-primary-window-minutes": "300",
    "x-codex-secondary-reset-at": "1795475715",
    "x-codex-secondary-used-percent": "40",
    "x-codex-secondary-window-minutes": "10080",
}
PRIMARY_RESET = datetime(2026, 11, 21, 1, 15, 15, tzinfo=UTC)  # 1795223715
RELAYED = "The usage limit has been reached"
OPENAI_AT = datetime(2026, 11, 20, 23, 15, 15, tzinfo=UTC)
OPENAI_DATE = "Fri, 20 Nov 2026 23:15:15 GMT"  # the capture's `date`: the instant its resets are read against


@pytest.mark.parametrize(
    ("body", "headers", "reset", "kind"),
    [
        (OPENAI_BODY, CODEX_WINDOWS, PRIMARY_RESET, "five_hour"),  # the capture: all of them agree
        (OPENAI_BODY, {}, PRIMARY_RESET, ""),  # the body alone
        ('{"error": {"type": "usage_limit_reached", "resets_in_seconds": 7200}}', {}, PRIMARY_RESET, ""),
        ('{"error": {"type": "usage_limit_reached"}}', CODEX_WINDOWS, PRIMARY_RESET, "five_hour"),  # headers alone
        (
            '{"error": {"type": "usage_limit_reached"}}',
            {**CODEX_WINDOWS, "x-codex-secondary-used-percent": "100"},
            datetime(2026, 11, 23, 23, 15, 15, tzinfo=UTC),  # both windows spent: the later reset lifts the limit
            "weekly",
        ),
    ],
)
def test_openais_usage_limit_gives_its_reset_from_the_body_or_the_window_headers(
    body: str, headers: dict[str, str], reset: datetime, kind: str
) -> None:
    limit = usage_limit(429, RELAYED, body, {"date": OPENAI_DATE, **headers}, OPENAI_AT)
    assert limit is not None and (limit.message, limit.resets_at, limit.kind) == (RELAYED, reset, kind)


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"type": "usage_limit_reached", "resets_at": 1500000000}}',  # long past
        '{"error": {"type": "usage_limit_reached", "resets_at": "soon", "resets_in_seconds": -5}}',
        '{"error": {"type": "usage_limit_reached", "resets_at": true, "resets_in_seconds": 1e308}}',
        '{"error": "usage_limit_reached"}',
        '["usage_limit_reached"]',
        '{"error": {"resets_at": 1795223715',  # cut off
    ],
)
def test_no_reset_from_an_absurd_or_broken_body(body: str) -> None:
    limit = usage_limit(429, RELAYED, body, {"date": OPENAI_DATE}, OPENAI_AT)
    assert limit is not None and limit.resets_at is None


def test_a_window_not_used_up_is_not_the_limits_reset() -> None:
    headers = {**CODEX_WINDOWS, "x-codex-primary-used-percent": "99"}
    body = '{"error": {"type": "usage_limit_reached"}}'
    limit = usage_limit(429, RELAYED, body, {"date": OPENAI_DATE, **headers}, OPENAI_AT)
    assert limit is not None and limit.resets_at is None


_VALUES = st.one_of(
    st.text(max_size=30),
    st.integers().map(str),
    st.floats().map(str),
    st.sampled_from(["1e308", "nan", "-inf", "²", "١٠٠", "100", "300", "1795223715"]),
)


@given(
    st.one_of(
        st.text(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.floats() | st.integers() | st.text(),
            lambda inner: (
                st.lists(inner) | st.dictionaries(st.sampled_from(["error", "resets_at", "resets_in_seconds"]), inner)
            ),
        ).map(json.dumps),
    ),
    st.dictionaries(st.sampled_from([*sorted(CODEX_WINDOWS), "date", "retry-after"]), _VALUES),
)
def test_usage_limit_never_raises(body: str, headers: dict[str, str]) -> None:
    limit = usage_limit(429, RELAYED, body, headers, OPENAI_AT)
    assert limit is not None
    assert limit.resets_at is None or limit.resets_at.tzinfo is not None


def test_a_relayed_cli_sentence_is_a_usage_limit_with_its_reset() -> None:
    limit = usage_limit(429, "You’ve hit your usage limit. Try again at 8:00 PM.", "", {"date": DATE}, AT)
    assert limit is not None and limit.resets_at == datetime(2026, 11, 27, 20, 0, tzinfo=UTC)


def test_an_event_with_a_usage_limit() -> None:
    error = api_error(
        429, "You have reached your usage limit for this billing period.", "", x_ratelimit_reset="1795838400"
    )
    found = from_event(error, AT, "")
    assert found.kind is ErrorKind.USAGE_LIMIT and found.limit is not None
    assert found.limit.resets_at == datetime(2026, 11, 28, 4, tzinfo=UTC)


# ---------------------------------------------------------------- log lines


def test_a_log_line_is_read_with_its_quoted_fields() -> None:
    line = log_lines.parse(FAILED)
    assert line is not None and line.level == "ERROR" and line.message == "failed"
    assert line.fields["ref"] == "err_9021620b"
    assert line.error == "ProviderModelNotFoundError: Model not found: fake/nope."
    assert line.fields["cause"].splitlines()[1].strip() == "at <anonymous> (/$bunfs/root/chunk.js:1:2)"


def test_the_model_catalogue_and_other_programs_lines_are_not_the_runs_errors() -> None:
    text = "\n".join(
        [CATALOGUE, "time=x level=error msg=other program", "plain", 'timestamp=x level=ERROR run=1 message="a', ""]
    )
    assert [line.message for line in log_lines.run_errors(text)] == ['"a']  # unterminated quote: kept bare
    assert log_lines.last_stream_error(text) == ""
    assert log_lines.parse("x" * 200_000) is None
    huge = log_lines.parse('timestamp=x level=ERROR run=1 message="stream error" error.error="' + "y" * 200_000 + '"')
    assert huge is not None and huge.message == "stream error"
