"""An agent's API failing is not the task failing, in-process: a 429 `rate_limit_error` or a 5xx is retried after
the backoff, not counted, never a failed attempt; the plan's usage limit (a 429 `rate_limit_error` too) waits for
its reset.

Runs built as `ralph run` builds them (harness.py): command agents ending on what Claude Code, an SDK or the API
itself prints, and the Claude backend's parser reading real runs (harness_backends.py). Backoff waits are zero
(`backoff.initial_seconds: 0`), and the clock is a fake one: nothing here sleeps. A real agent process whose stderr
carries the API's error is tests/integration/test_api_error_classes.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from ralphloop.processes.replay import Recording
from tests.conftest import read_json
from tests.engine.harness import Ran, Turn, Turns, entries, metrics, run
from tests.engine.harness_backends import NO_BACKOFF_WAIT, RUNS, USAGE_EXIT, add_config, replays

ALL = ["S-1", "S-2", "S-3"]

# Anthropic's error bodies as Claude Code 2.0 to 2.1.7x printed them after "API Error: <status> " (reported in
# anthropics/claude-code#20179 and #24799 for a 500; the 429 body is the one in #10188's error log), and
# Claude Code 2.1.329's own sentences (shared/corpus/cli-runs/claude_mock_*_streamjson, their is_error results).
RATE_BODY = (
    '{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate '
    'limit. Please try again later."},"request_id":"req_011CUQMXMRXYuNRouGZJvUZ8"}'
)
# What an agent on the API itself may end on: the bare error envelope.
RATE_ENVELOPE = (
    '{"type":"error","error":{"type":"rate_limit_error",'
    '"message":"Number of request tokens has exceeded your per-minute rate limit"}}'
)
SERVER_BODY = (
    '{"type":"error","error":{"type":"api_error","message":"Internal server error"},'
    '"request_id":"req_011CXPBk57rUbKp5XVtievhP"}'
)
# Each as tests/agents/step_agent.py says it: a line on stdout (`say`) or stderr (`err`), then the exit.
RATE_LIMITED = {
    "claude-1.x-2.1.7x": Turn(say=f"API Error: 429 {RATE_BODY}\n", exit=1),
    "claude-2.1.329": Turn(
        say="API Error: Request rejected (429) · This request would exceed the rate limit for your organization "
        "of 50,000 input tokens per minute.\n",
        exit=1,
    ),
    "claude-2.1.49-exit-0": Turn(say="API Error: Rate limit reached\n", exit=0),
    "api-envelope-on-stderr": Turn(say="calling the model\n", err=RATE_ENVELOPE + "\n", exit=1),
}
SERVER_FAILING = {
    "500-body": Turn(say=f"API Error: 500 {SERVER_BODY}\n", exit=1),
    "500-2.1.329": Turn(
        say="API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in "
        "a moment. If it persists, check your inference gateway (127.0.0.1:18080).\n",
        exit=1,
    ),
    "502": Turn(say="API Error: 502 Bad Gateway\n", exit=1),
    "503": Turn(say="API Error: 503 Service Unavailable\n", exit=1),
    "504": Turn(say="API Error: 504 Gateway Timeout\n", exit=1),
    "529": Turn(say="API Error: 529 Overloaded. This is a server-side issue, usually temporary.\n", exit=1),
    "python-sdk": Turn(
        err="anthropic.InternalServerError: Error code: 500 - {'type': 'error', 'error': {'type': "
        "'api_error', 'message': 'Internal server error'}}\n",
        exit=1,
    ),
}
ALL_DONE = Turn(passes=ALL, say="all done\n")


def failing_once(failure: Turn) -> Turns:
    """Iteration 1 starts some work, then its API fails; the next one does every story."""
    started = Turn(write={"partial.txt": "started\n"}, say=failure.say, err=failure.err, exit=failure.exit)
    return Turns(started, then=ALL_DONE)


def assert_retried_not_counted(feature: Path, done: Ran, words: str) -> dict[str, str]:
    assert done.outcome.reason.exit_code == 0, done.screen
    logged = entries(feature)
    assert [entry["Status"] for entry in logged] == ["api-error", "complete"], logged
    assert words in logged[0]["Note"] and "not counted" in logged[0]["Note"], logged[0]
    assert "retrying in 0s (attempt 1/10)" in done.screen
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["retryCount"], status.get("usageLimit")) == ("complete", 0, None)
    assert "[FAIL]" not in (feature / "progress.txt").read_text()  # never a failed attempt at the task
    breaker = read_json(feature / ".circuit_breaker_state")
    assert breaker["consecutive_failures"] == 0
    assert [line["outcome"] for line in metrics(feature)] == ["api-error", "complete"]
    return logged[0]


@pytest.fixture
def no_wait(project: Path, feature: Path) -> Path:
    """The feature, with no backoff wait."""
    add_config(project, NO_BACKOFF_WAIT)
    return feature


@pytest.mark.parametrize("failure", list(RATE_LIMITED.values()), ids=list(RATE_LIMITED))
def test_a_command_agents_api_rate_limit_is_retried_after_the_backoff(
    project: Path, no_wait: Path, failure: Turn
) -> None:
    done = run(project, failing_once(failure))

    note = assert_retried_not_counted(no_wait, done, "rate-limited")
    assert "not the usage limit" in note["Note"]
    assert not (project / "partial.txt").exists()  # the call's half-done work was saved and undone


@pytest.mark.parametrize("failure", list(SERVER_FAILING.values()), ids=list(SERVER_FAILING))
def test_a_command_agents_server_error_is_retried_after_the_backoff(
    project: Path, no_wait: Path, failure: Turn
) -> None:
    done = run(project, failing_once(failure))

    assert_retried_not_counted(no_wait, done, "overloaded or failing")


def test_a_rate_limit_that_lasts_stops_after_the_backoff_never_as_retries_exhausted(
    project: Path, feature: Path
) -> None:
    # More backoff retries than max_retries (3): as failed attempts, the third call would end the run.
    add_config(project, "backoff:\n  initial_seconds: 0\n  attempts: 4\n")

    done = run(project, Turns(then=RATE_LIMITED["claude-1.x-2.1.7x"]))

    assert done.outcome.reason is ExitReason.AGENT_ERROR and done.outcome.reason.exit_code == 1
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["retryCount"]) == ("agent_error", 0)
    assert "rate-limited" in status["exitMessage"] and "rate_limit_error" in status["exitMessage"]
    assert status["exitMessage"].endswith("(still failing after 4 retries)")
    assert [entry["Status"] for entry in entries(feature)] == ["api-error"] * 5


def test_claude_codes_json_result_at_the_5_hour_limit_is_the_usage_limit_though_a_rate_limit_error(
    project: Path, feature: Path
) -> None:
    # `claude -p --output-format json` at the plan's limit (shared/corpus/cli-runs/claude_mock_oauth_unified_5h_json,
    # fields trimmed): the type is rate_limit_error like any 429, but only a wait for the reset helps.
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "api_error_status": 429,
        "api_error_type": "rate_limit_error",
        "api_error": "usage_limit_reached",
        "result": "You've hit your 5-hour limit · resets 1am (UTC)",
    }

    done = run(project, Turns(then=Turn(say=json.dumps(result) + "\n", exit=1)), flags=USAGE_EXIT)

    assert done.outcome.reason is ExitReason.USAGE_LIMIT and done.outcome.reason.exit_code == 2
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["usageLimit"]["kind"]) == ("usage_limit", "five_hour")
    assert [entry["Status"] for entry in entries(feature)] == ["usage-limit"]


# ---------------------------------------------------------------------------------------------------------------
# What merely mentions an API error is the agent's work, not an API failure.

QUOTED = (
    "I made the client retry rate limits. It now handles bodies like:\n"
    "```\n"
    f"API Error: 429 {RATE_BODY}\n"
    f"{RATE_BODY}\n"
    "```\n"
    "API Error: 500 responses are retried with a backoff now.\n"
    "and it logs 'rate_limit_error' and 'API Error: 503 Service Unavailable' when it gives up.\n"
)


@pytest.mark.parametrize("last", ["All three stories pass.", "API Error: 500 responses are retried with a backoff."])
def test_an_agent_that_writes_about_api_errors_has_done_its_work(project: Path, no_wait: Path, last: str) -> None:
    done = run(project, Turns(then=Turn(passes=ALL, say=QUOTED + last + "\n")))

    assert done.outcome.reason is ExitReason.COMPLETE
    assert [entry["Status"] for entry in entries(no_wait)] == ["complete"]
    assert "retrying in" not in done.screen


def test_an_agent_that_crashes_after_quoting_a_rate_limit_error_has_failed_its_task(
    project: Path, no_wait: Path
) -> None:
    crash = Turn(say=QUOTED + "\n", err=f"{RATE_BODY}\nAssertionError: expected 3 retries, got 2\n", exit=1)

    done = run(project, Turns(then=crash), n=1)

    assert done.outcome.reason.exit_code == 1
    logged = entries(no_wait)
    assert [entry["Status"] for entry in logged] == ["failed"]
    assert "AssertionError" in logged[0]["Note"]
    assert "(attempt 1/3)" in (no_wait / "progress.txt").read_text()


# ---------------------------------------------------------------------------------------------------------------
# The Claude backend.


def claude_said(text: str, *, rc: int = 1, structured: bool = True) -> Recording:
    """A real 2.1.329 run (`claude_mock_server_500_streamjson`): its events, with the CLI's message `text`, and
    without the structured api_error_* fields older versions did not write."""
    lines = []
    for line in (RUNS["claude"] / "claude_mock_server_500_streamjson" / "stdout").read_text().splitlines():
        event = json.loads(line)
        if event.get("type") in ("assistant", "result"):
            if not structured:
                for key in ("error", "api_error_status", "api_error_type", "is_api_error_message"):
                    event.pop(key, None)
            if event["type"] == "result":
                event["result"] = text
            else:
                event["message"]["content"] = [{"type": "text", "text": text}]
        lines.append(json.dumps(event))
    return Recording(("\n".join(lines) + "\n").encode(), exit_code=rc)


def test_claudes_per_minute_429_is_retried_but_its_5_hour_429_is_the_usage_limit(project: Path, no_wait: Path) -> None:
    # Both real runs carry api_error_status 429 and api_error_type rate_limit_error; only the second one has
    # api_error usage_limit_reached, a rejected rate_limit_event and "You've hit your 5-hour limit".
    agent = replays(
        "claude", "claude_mock_rate_limit_429_streamjson", "work", "claude_mock_oauth_unified_rejected_streamjson"
    )

    done = run(project, agent, backend=None, flags=USAGE_EXIT)

    assert done.outcome.reason is ExitReason.USAGE_LIMIT and done.outcome.reason.exit_code == 2
    logged = entries(no_wait)
    assert [entry["Status"] for entry in logged] == ["api-error", "complete", "usage-limit"]
    assert "rate-limited the request (a short rate limit, not the usage limit)" in logged[0]["Note"]
    assert "50,000 input tokens per minute" in logged[0]["Note"]
    assert "retrying in 0s (attempt 1/10)" in done.screen
    status = read_json(no_wait / "status.json")
    assert (status["exitReason"], status["usageLimit"]["kind"]) == ("usage_limit", "five_hour")
    assert status["usageLimit"]["resetsAt"] == "2026-11-21T02:00:20Z"


@pytest.mark.parametrize(
    ("text", "rc", "words"),
    [
        (f"API Error: 429 {RATE_BODY}", 1, "rate-limited"),
        ("API Error: Rate limit reached", 0, "rate-limited"),  # 2.1.49 exits 0 (anthropics/claude-code#79500)
        ("API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", 1, "rate-limited"),
        (f"API Error: 500 {SERVER_BODY}", 1, "overloaded or failing"),
        ("API Error: 503 Service Unavailable", 1, "overloaded or failing"),
        ("API Error: Repeated 529 Overloaded errors", 1, "overloaded or failing"),
    ],
    ids=["429-body", "rate-limit-reached", "temporarily-limiting", "500-body", "503", "repeated-529"],
)
def test_claudes_older_api_error_sentences_are_retried_after_the_backoff(
    project: Path, no_wait: Path, text: str, rc: int, words: str
) -> None:
    agent = replays("claude", claude_said(text, rc=rc, structured=False), "work")

    done = run(project, agent, backend=None, n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS  # one counted iteration, two stories left
    logged = entries(no_wait)
    assert [entry["Status"] for entry in logged] == ["api-error", "complete"], logged
    assert words in logged[0]["Note"] and text[:40] in logged[0]["Note"]
    status = read_json(no_wait / "status.json")
    assert (status["exitReason"], status["retryCount"]) == ("max_iterations", 0)


def test_a_claude_result_that_discusses_http_500_handling_is_the_agents_work(project: Path, no_wait: Path) -> None:
    # A successful result (is_error false, exit 0) whose text is the agent's prose about API errors.
    events = [json.loads(line) for line in claude_said("", rc=0).stdout.decode().splitlines()]
    events = [event for event in events if event.get("type") != "assistant"]
    for event in events:
        if event.get("type") == "result":
            event.update(is_error=False, terminal_reason="completed", stop_reason="end_turn")
            for key in ("api_error_status", "api_error_type"):
                event.pop(key)
            event["result"] = QUOTED + "API Error: 500 is retried now; rate_limit_error waits for retry-after."
    agent = replays("claude", Recording("".join(json.dumps(event) + "\n" for event in events).encode()))

    done = run(project, agent, backend=None, n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS  # after the one counted iteration
    assert len(agent.launches) == 1  # not retried
    assert [entry["Status"] for entry in entries(no_wait)] != ["api-error"]
    assert "retrying in" not in done.screen
