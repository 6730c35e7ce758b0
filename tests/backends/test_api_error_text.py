"""API failures in an agent's last word (agents/api_errors.py), and how both backends read them.

The through-the-CLI tests are in tests/integration/test_api_error_classes.py; these pin each shape and each
false positive one by one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.agents.api_errors import classify_line, last_line
from ralphloop.agents.claude.errors import Facts, classify
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.text import TextOutputParser
from ralphloop.core.protocols import AgentRequest, AgentResult, ErrorKind, ProcessOutcome

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "claude" / "runs"
RATE, SERVER, NETWORK = ErrorKind.RATE_LIMITED, ErrorKind.OVERLOADED, ErrorKind.NETWORK
RATE_BODY = '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded"}}'
SERVER_BODY = '{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_1"}'

STATED = {
    f"API Error: 429 {RATE_BODY}": RATE,
    "API Error: Request rejected (429) · This request would exceed the rate limit for your organization": RATE,
    "API Error: Rate limit reached": RATE,
    "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited": RATE,
    RATE_BODY: RATE,
    "anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error'}}": RATE,
    f"API Error: 500 {SERVER_BODY}": SERVER,
    "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again": SERVER,
    "API Error: 500": SERVER,
    "API Error: 502 Bad Gateway": SERVER,
    "API Error: 503 Service Unavailable": SERVER,
    "API Error: 504 Gateway Timeout": SERVER,
    "API Error: 529 Overloaded. This is a server-side issue, usually temporary.": SERVER,
    "API Error: Repeated 529 Overloaded errors": SERVER,
    '  ⎿  API Error (529 {"type":"error","error":{"type":"overloaded_error"}}) · Retrying in 1 seconds…': SERVER,
    '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}': SERVER,
    "anthropic.InternalServerError: Error code: 500 - {'type': 'error'}": SERVER,
    'Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}': SERVER,
    "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)": NETWORK,
    "\x1b[31mAPI Error: 503 Service Unavailable\x1b[0m": SERVER,
}
# Claude Code's json result line at an API failure, and at the plan's usage limit (shared/corpus/cli-runs, trimmed).
RESULT_429 = {
    "type": "result",
    "is_error": True,
    "api_error_status": 429,
    "api_error_type": "rate_limit_error",
    "result": "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
}
RESULT_5H = {
    **RESULT_429,
    "api_error": "usage_limit_reached",
    "result": "You've hit your 5-hour limit · resets 1am (UTC)",
}

NOT_STATED = [
    "",
    "All three stories pass.",
    "I made API Error: 500 responses retry with a backoff.",
    "API Error: 500 responses are retried with a backoff now.",
    "API Error: 429s are handled.",
    "> API Error: 429 " + RATE_BODY,  # a Markdown quote in the agent's summary
    "- API Error: 503 Service Unavailable is now retried",
    "the client maps rate_limit_error to a RetryableError",
    '    raise ApiError(\'{"type":"error","error":{"type":"rate_limit_error"}}\')',
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}',
    "API Error: 401 Invalid API key",  # the Claude backend's auth class; a command agent's failed attempt
    '{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}',
    '{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}',  # Codex: its own words
    json.dumps(RESULT_5H),  # the usage limit, found by its own sentence first
    json.dumps({**RESULT_429, "is_error": False}),
    '{"type":"result","is_error":true,"result":"Reached maximum number of turns (1)"}',
    "{" * 100_000,
]


@pytest.mark.parametrize("line", list(STATED), ids=range(len(STATED)))
def test_each_shape_a_cli_or_sdk_writes_is_its_kind(line: str) -> None:
    found = classify_line(line)
    assert found is not None and found[0] is STATED[line]
    assert "\n" not in found[1] and "\x1b" not in found[1]


def test_claude_codes_json_result_line_is_read_by_its_fields() -> None:
    assert classify_line(json.dumps(RESULT_429)) == (RATE, RESULT_429["result"])
    overloaded = {
        **RESULT_429,
        "api_error_status": 529,
        "api_error_type": "overloaded_error",
        "result": "API Error: 529",
    }
    assert classify_line(json.dumps(overloaded)) == (SERVER, "API Error: 529")
    # Without the fields (older versions), the sentence in `result` says it.
    assert classify_line(
        json.dumps({"type": "result", "is_error": True, "result": "API Error: 503 Service Unavailable"})
    ) == (
        SERVER,
        "API Error: 503 Service Unavailable",
    )


@pytest.mark.parametrize("line", NOT_STATED, ids=range(len(NOT_STATED)))
def test_what_only_mentions_an_api_error_is_none(line: str) -> None:
    assert classify_line(line) is None


@given(st.text())
def test_a_line_that_starts_with_prose_is_never_an_api_failure(text: str) -> None:
    assert classify_line(f"I saw {text.splitlines()[0] if text.splitlines() else text}") is None


@given(st.text())
def test_no_line_makes_the_classifier_raise(text: str) -> None:
    classify_line(text)
    classify_line("API Error: " + text)
    classify_line('{"type":"error","error":' + text)


def test_the_last_line_is_whole() -> None:
    long_json = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "x" * 5000}})
    assert last_line(f"work\n{long_json}\n\n  \n") == long_json
    assert last_line("") == ""


# ---------------------------------------------------------------------------------------------------------------
# A command agent (plain text): only the last line of stdout and of stderr.

REQUEST = AgentRequest(prompt="", iteration=1, project_root="", feature_dir="", prompt_file="", task_id="S-1")


def text_result(stdout: str, *, code: int | None = 1, stderr: str = "", **outcome: Any) -> AgentResult:
    parser = TextOutputParser(REQUEST)
    parser.feed(stdout.encode())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=stderr, **outcome))


def test_a_command_agents_last_word_names_the_kind_and_says_it_is_not_the_usage_limit() -> None:
    result = text_result(f"working\nAPI Error: 429 {RATE_BODY}\n")
    assert (result.failed, result.error_kind, result.usage_limit) == (True, RATE, None)
    assert result.error is not None and result.error.startswith("the agent's API rate-limited the request")
    assert "not the usage limit" in result.error and "rate_limit_error" in result.error


def test_exit_0_with_the_error_as_last_word_is_an_api_failure_too() -> None:
    # Claude Code 2.1.49 in text mode prints "API Error: Rate limit reached" and exits 0 (anthropics/claude-code#79500).
    result = text_result("API Error: Rate limit reached\n", code=0)
    assert (result.failed, result.error_kind) == (True, RATE)


def test_the_error_on_stderr_counts_when_stdout_ends_on_something_else() -> None:
    result = text_result("calling the model\n", stderr=f"retrying\n{SERVER_BODY}\n")
    assert result.error_kind is SERVER


def test_an_error_before_the_last_line_is_the_agents_own_failure() -> None:
    result = text_result(f"API Error: 500 {SERVER_BODY}\nTraceback ...\nAssertionError: expected 3\n")
    assert (result.failed, result.error_kind) == (True, None)
    assert result.error == "exit code 1"


def test_a_successful_agent_that_quotes_errors_is_a_success() -> None:
    result = text_result(f"```\nAPI Error: 429 {RATE_BODY}\n{RATE_BODY}\n```\nDone: retries added.\n", code=0)
    assert (result.failed, result.error, result.error_kind) == (False, None, None)


@pytest.mark.parametrize("stopped", [{"timed_out": True}, {"interrupted": True}, {"start_error": "no such file"}])
def test_a_run_ralph_stopped_states_no_api_failure(stopped: dict[str, Any]) -> None:
    result = text_result(f"API Error: 429 {RATE_BODY}\n", code=None, **stopped)
    assert result.error_kind is None


def test_the_usage_limit_wins_over_the_rate_limit_error_it_also_is() -> None:
    result = text_result("You've hit your 5-hour limit · resets 8pm (America/New_York)\n", stderr=RATE_BODY)
    assert result.usage_limit is not None and result.usage_limit.kind == "five_hour"
    assert result.error_kind is None
    assert text_result(json.dumps(RESULT_5H) + "\n").usage_limit is not None


# ---------------------------------------------------------------------------------------------------------------
# The Claude backend: an is_error result's text, then only the last line of stderr.


def claude_result(stdout: str, *, code: int = 1, stderr: str = "") -> AgentResult:
    parser = StreamJsonParser()
    parser.feed(stdout.encode())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=stderr))


def older_result(text: str) -> str:
    """An is_error result as versions before the api_error_* fields wrote it."""
    return json.dumps({"type": "result", "subtype": "success", "is_error": True, "result": text}) + "\n"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("API Error: Rate limit reached", RATE),
        ("API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", RATE),
        (f"API Error: 429 {RATE_BODY}", RATE),
        (f"API Error: 500 {SERVER_BODY}", SERVER),
        ("API Error: 502 Bad Gateway", SERVER),
        # A per-minute limit that names 500,000 tokens is still a 429: the exact shape goes before the words.
        ("API Error: Request rejected (429) · 500,000 input tokens per minute", RATE),
    ],
)
def test_older_claude_sentences_get_their_kind(text: str, kind: ErrorKind) -> None:
    result = claude_result(older_result(text))
    assert result.error_kind is kind
    assert result.error is not None and text in result.error


def test_claudes_rate_limit_message_says_it_is_not_the_usage_limit() -> None:
    stdout = (RUNS / "claude_mock_rate_limit_429_streamjson" / "stdout").read_text()
    result = claude_result(stdout)
    assert result.error_kind is RATE and result.usage_limit is None
    assert result.error is not None and "(a short rate limit, not the usage limit)" in result.error


def test_claudes_5_hour_limit_is_the_usage_limit_though_its_type_is_rate_limit_error() -> None:
    stdout = (RUNS / "claude_mock_oauth_unified_rejected_streamjson" / "stdout").read_text()
    assert '"api_error_type":"rate_limit_error"' in stdout
    result = claude_result(stdout)
    assert result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None and result.usage_limit.kind == "five_hour"


def test_a_claude_run_cut_short_with_the_api_error_on_stderr() -> None:
    result = claude_result("", stderr="warming up\nAPI Error: 503 Service Unavailable\n")
    assert result.error_kind is SERVER
    assert (
        claude_result("", stderr="API Error: 503 Service Unavailable\nTypeError: x is undefined\n").error_kind is None
    )


def test_a_successful_claude_result_about_http_500_handling_is_the_agents_work() -> None:
    events = [json.loads(line) for line in (RUNS / "claude_mock_tool_streamjson" / "stdout").read_text().splitlines()]
    for event in events:
        if event.get("type") == "result":
            event["result"] = f"API Error: 500 {SERVER_BODY}\nHandled: rate_limit_error now waits for retry-after."
    stdout = "".join(json.dumps(event) + "\n" for event in events)
    result = claude_result(stdout, code=0, stderr="API Error: 503 Service Unavailable\n")
    assert (result.failed, result.error_kind, result.error) == (False, None, None)


def test_the_claude_classifier_keeps_the_agents_own_failures_its_own() -> None:
    turns = Facts(subtype="error_max_turns", text="Reached maximum number of turns (1)", stderr=RATE_BODY)
    assert classify(turns) == (ErrorKind.MAX_TURNS, "Claude Code ran out of turns: Reached maximum number of turns (1)")
    assert classify(Facts(text="", stderr=f"{RATE_BODY}\nSegmentation fault")) is None
