"""The gemini backend's error classes and quota limits, over real Gemini CLI 0.61.0 failures
(tests/fixtures/gemini/) and its own wordings, and what the agent's words and hostile output cannot do."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents.gemini.errors import classify
from ralphloop.agents.gemini.parser import GeminiStreamParser
from ralphloop.agents.json_lines import MAX_LINE_BYTES
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome

FIXTURES = Path(__file__).parents[2] / "fixtures" / "gemini"
NOW = datetime(2026, 11, 20, 23, 8, tzinfo=UTC)


def parse(name: str) -> AgentResult:
    folder = FIXTURES / name
    code = int((folder / "rc").read_text())
    parser = GeminiStreamParser(NOW)
    parser.feed((folder / "stdout").read_bytes())
    return parser.finish(
        ProcessOutcome(
            exit_code=code, duration_s=1.0, timed_out=code == 124, stderr_tail=(folder / "stderr").read_text()
        )
    )


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("mock_auth_400_streamjson", ErrorKind.AUTH, "API key not valid"),
        ("e2e_auth_400", ErrorKind.AUTH, "GEMINI_API_KEY"),
        ("e2e_forbidden_403", ErrorKind.AUTH, "Consumer has been suspended"),
        ("streamjson_noauth", ErrorKind.AUTH, "Please set an Auth method"),
        ("e2e_model_404", ErrorKind.BAD_MODEL, "gemini-9-pro is not found"),
        ("e2e_server_500", ErrorKind.OVERLOADED, "An internal error has occurred"),
        ("e2e_overloaded_503", ErrorKind.OVERLOADED, "The model is overloaded"),
        ("e2e_quota_retry_short", ErrorKind.RATE_LIMITED, "exceeded your current quota"),
        ("e2e_untrusted", ErrorKind.REFUSED, "use `--skip-trust`"),
        ("e2e_empty_stdin", ErrorKind.REFUSED, "No input provided via stdin"),
    ],
)
def test_each_failure_has_its_kind(name: str, kind: ErrorKind, words: str) -> None:
    result = parse(name)
    assert result.failed and result.error_kind is kind and result.usage_limit is None
    assert result.error is not None and words in result.error and "\x1b" not in result.error


@pytest.mark.parametrize("name", ["mock_quota_429_daily_streamjson", "e2e_quota_daily", "e2e_router_daily"])
def test_the_daily_quota_is_the_usage_limit_without_a_reset(name: str) -> None:
    result = parse(name)
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None
    assert (result.usage_limit.vendor, result.usage_limit.kind, result.usage_limit.resets_at) == (
        "gemini",
        "daily",
        None,
    )
    assert result.usage_limit.message == "You have exhausted your daily quota on this model."


def test_a_quota_reset_after_a_duration_counts_from_when_the_cli_said_it() -> None:
    result = parse("e2e_capacity_reset")
    assert result.error_kind is ErrorKind.USAGE_LIMIT and result.usage_limit is not None
    # The result event's timestamp, 2026-11-27T14:44:12.147Z, plus 15h57m40s.
    assert result.usage_limit.resets_at == datetime(2026, 11, 28, 6, 41, 52, 147000, tzinfo=UTC)
    assert "Your quota will reset after 15h57m40s" in result.usage_limit.message


def test_a_retry_delay_longer_than_the_cli_retries_is_the_usage_limit() -> None:
    result = parse("e2e_quota_retry_long")
    assert result.error_kind is ErrorKind.USAGE_LIMIT and result.usage_limit is not None
    assert result.usage_limit.resets_at == datetime(2026, 11, 27, 15, 44, 1, 778000, tzinfo=UTC)  # + 3600 s
    assert result.usage_limit.message.startswith("[API Error: You exceeded your current quota")


@pytest.mark.parametrize(
    ("name", "waiting_for"),
    [
        ("json_fakekey_nonet", "fetch failed sending request"),
        ("mock_quota_429_minute_streamjson", "Resource has been exhausted"),
    ],
)
def test_a_run_stopped_while_gemini_retried_says_what_it_waited_for(name: str, waiting_for: str) -> None:
    result = parse(name)
    assert result.failed and result.timed_out and result.error_kind is None and result.usage_limit is None
    assert result.error is not None and "Gemini was retrying: Attempt" in result.error and waiting_for in result.error


@pytest.mark.parametrize(
    ("said", "code", "kind"),
    [
        ("[API Error: API key expired. Please renew the API key.]", 144, ErrorKind.AUTH),
        ("[API Error: This API method requires billing to be enabled.]", 147, ErrorKind.BILLING),
        ("Exiting due to an error processing the @ command.", 42, ErrorKind.REFUSED),
        ('YOLO mode is disabled by the "disableYolo" setting.', 52, ErrorKind.REFUSED),
        ("Reached max session turns for this session.", 53, ErrorKind.MAX_TURNS),
        ("[API Error: exception TypeError: fetch failed sending request]", 1, ErrorKind.NETWORK),
        ("[API Error: Resource has been exhausted (e.g. check quota).]", 1, ErrorKind.RATE_LIMITED),
        ('[API Error: {"error":{"code":502,"message":"Bad Gateway"}}]', 1, ErrorKind.OVERLOADED),
    ],
)
def test_gemini_messages_and_exit_codes_have_their_kinds(said: str, code: int, kind: ErrorKind) -> None:
    found = classify(said, code)
    assert found is not None and found[0] is kind


def test_an_unknown_failure_is_the_tasks() -> None:
    assert classify("[API Error: Request contains an invalid argument.]", 144) is None
    assert classify("", 1) is None


def feed(*events: dict[str, object] | bytes) -> GeminiStreamParser:
    parser = GeminiStreamParser(NOW)
    for event in events:
        parser.feed(event if isinstance(event, bytes) else json.dumps(event).encode() + b"\n")
    return parser


def said_by_agent(text: str) -> dict[str, object]:
    return {"type": "message", "role": "assistant", "content": text, "delta": True}


SUCCESS = {"type": "result", "status": "success", "stats": {"input_tokens": 10, "output_tokens": 1}}


@pytest.mark.parametrize(
    "text",
    [
        "You have exhausted your daily quota on this model.",
        "[API Error: You have exhausted your capacity on this model. Your quota will reset after 1h.]",
        "Please retry in 3600s. API key not valid. 429 RESOURCE_EXHAUSTED",
    ],
)
def test_the_agents_own_words_are_never_an_error_or_a_limit(text: str) -> None:
    result = feed(said_by_agent(text), SUCCESS).finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert not result.failed and result.usage_limit is None and result.error_kind is None


def test_the_agents_words_do_not_classify_a_failed_run_either() -> None:
    result = feed(said_by_agent("API key not valid. You have exhausted your daily quota on this model.")).finish(
        ProcessOutcome(exit_code=1, duration_s=1.0)
    )
    assert result.failed and result.error_kind is None and result.usage_limit is None


def test_tool_output_the_cli_logged_to_stderr_is_not_read_once_a_session_began() -> None:
    stderr = "Error executing tool run_shell_command: boom\nYou have exhausted your daily quota on this model.\n"
    started = feed({"type": "init", "session_id": "s", "model": "auto"})
    result = started.finish(ProcessOutcome(exit_code=1, duration_s=1.0, stderr_tail=stderr))
    assert result.failed and result.usage_limit is None and result.error_kind is None
    before = feed().finish(ProcessOutcome(exit_code=1, duration_s=1.0, stderr_tail=stderr))
    assert before.error_kind is ErrorKind.USAGE_LIMIT  # no session yet: stderr is the CLI's alone


def test_exit_0_with_an_error_result_is_a_failure_with_the_clis_reason() -> None:
    result = parse("e2e_empty_answer")  # an empty answer: exit 0, the reason in an `error` event before the result
    assert result.exit_code == 0 and result.failed and result.is_error and result.error_kind is None
    assert result.error == (
        "Gemini reported an error: The model returned an empty response with no text or thoughts. This may be a "
        "transient API issue; please try again."
    )
    bare = feed({"type": "result", "status": "error", "stats": {}}).finish(ProcessOutcome(exit_code=0, duration_s=1))
    assert bare.failed and bare.error == "Gemini reported an error: result status error"


def test_no_output_at_all_is_a_failed_attempt() -> None:
    result = feed().finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.failed and result.error == "Gemini ended without a result event" and result.error_kind is None


def test_truncated_invalid_and_huge_lines_are_skipped() -> None:
    huge = b'{"type":"message","role":"assistant","content":"' + b"x" * (20 * 1024 * 1024) + b'"}\n'  # 20 MB
    assert len(huge) > MAX_LINE_BYTES + 65536
    pipe = [huge[at : at + 65536] for at in range(0, len(huge), 65536)]  # as a pipe delivers it
    result = feed(
        b'{"type":"message","role":"assist',  # cut off, then a newline makes it invalid JSON
        b"\n\xff\xfe not json at all\n",
        *pipe,
        said_by_agent("kept"),
        b"[1, 2, 3]\n",
        SUCCESS,
    ).finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert not result.failed and result.final_text == "kept"


def test_a_flood_of_text_keeps_only_the_last_mib() -> None:
    parser = feed(*[said_by_agent("y" * 100_000) for _ in range(30)], said_by_agent("END"), SUCCESS)
    text = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0)).final_text
    assert len(text) == 1024 * 1024 and text.endswith("END")


def test_a_flood_of_tool_calls_without_results_keeps_memory_bounded() -> None:
    calls = [{"type": "tool_use", "tool_name": "glob", "tool_id": f"t{n}", "parameters": {}} for n in range(5000)]
    parser = feed(*calls)
    assert len(parser._calls) == 100 and parser.activity() == "Glob"


def test_a_tool_line_stays_one_line_whatever_the_tool_is_called() -> None:
    """(The monitor removes escape sequences when it draws; a newline here would forge a line of its own.)"""
    from ralphloop.agents.gemini.activity import readable_lines

    line = json.dumps({"type": "tool_use", "tool_name": "x\x1b[2J\n", "tool_id": "t", "parameters": {}})
    [shown] = readable_lines(line) or [""]
    assert "\n" not in shown
