"""The kind of failure ralph reads from real Claude Code runs, and what it makes of the rest of each run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.agents.claude.errors import Facts, classify
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "claude" / "runs"


def replay(name: str, chunk: int = 4093, max_turns: int | None = None) -> tuple[StreamJsonParser, AgentResult]:
    folder = RUNS / name
    data = (folder / "stdout").read_bytes()
    parser = StreamJsonParser(max_turns=max_turns)
    for start in range(0, len(data), chunk):
        parser.feed(data[start : start + chunk])
    code = int((folder / "rc").read_text().strip())
    outcome = ProcessOutcome(exit_code=code, duration_s=2.0, stderr_tail=(folder / "stderr").read_text())
    return parser, parser.finish(outcome)


KINDS = {
    "claude_mock_overloaded_529_streamjson": (ErrorKind.OVERLOADED, "529 Overloaded"),
    "claude_mock_server_500_streamjson": (ErrorKind.OVERLOADED, "500 Internal server error"),
    "claude_mock_rate_limit_429_streamjson": (ErrorKind.RATE_LIMITED, "Request rejected (429)"),
    "claude_mock_unified_rejected_429_streamjson": (ErrorKind.RATE_LIMITED, "Request rejected (429)"),
    "claude_mock_bad_model_404_streamjson": (ErrorKind.BAD_MODEL, "--model"),
    "claude_mock_credit_400_streamjson": (ErrorKind.BILLING, "Credit balance is too low"),
    "claude_streamjson_noauth": (ErrorKind.AUTH, "Not logged in"),
    "claude_mock_auth_401_streamjson": (ErrorKind.AUTH, "Invalid API key"),
    "claude_streamjson_fakekey_nonet_retries2": (ErrorKind.NETWORK, "Can't reach the API server"),
    "claude_mock_tool_maxturns1": (ErrorKind.MAX_TURNS, "Reached maximum number of turns (1)"),
    "claude_mock_budget": (ErrorKind.BUDGET, "Reached maximum budget ($0.001)"),
    "claude_resume_invalid": (ErrorKind.RESUME, "No conversation found with session ID"),
    "claude_root_skip_perms": (ErrorKind.REFUSED, "IS_SANDBOX=1"),
    "claude_mock_oauth_unified_rejected_streamjson": (ErrorKind.USAGE_LIMIT, "5-hour limit"),
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_real_failure_gets_its_kind_and_a_one_line_message(name: str) -> None:
    kind, words = KINDS[name]
    _, result = replay(name)
    assert result.failed
    assert result.error_kind is kind
    assert result.error is not None and words in result.error
    assert "\n" not in result.error


def test_fatal_and_transient_kinds_are_the_ones_the_issue_names() -> None:
    assert {kind for kind in ErrorKind if kind.fatal} == {
        ErrorKind.AUTH,
        ErrorKind.BILLING,
        ErrorKind.BAD_MODEL,
        ErrorKind.REFUSED,
    }
    assert {kind for kind in ErrorKind if kind.transient} == {
        ErrorKind.OVERLOADED,
        ErrorKind.NETWORK,
        ErrorKind.RATE_LIMITED,
    }


def test_auth_message_says_how_to_fix_it() -> None:
    _, result = replay("claude_mock_auth_401_streamjson")
    assert result.error is not None
    assert "/login" in result.error and "ANTHROPIC_API_KEY" in result.error


def test_max_turns_names_the_configured_limit_not_the_agents_prose() -> None:
    _, result = replay("claude_mock_tool_maxturns1", max_turns=1)
    assert result.error == "Claude Code ran out of turns (claude.max_turns: 1): Reached maximum number of turns (1)"
    assert "Running a command" not in result.error


def test_a_successful_tool_run_has_no_error_and_full_metrics() -> None:
    parser, result = replay("claude_mock_tool_streamjson", chunk=97)
    assert not result.failed and result.error_kind is None
    assert result.usage is not None
    assert (
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.usage.cache_creation_tokens,
        result.usage.cache_read_tokens,
    ) == (1734, 57, 2000, 5000)
    assert result.usage.total == 1734 + 57
    assert result.tokens == 1734 + 57 + 2000 + 5000
    assert result.cost_usd == pytest.approx(0.015057)
    assert result.num_turns == 2
    assert result.stop_reason == "end_turn"
    assert result.session_id == "dfcd3ba6-d912-4605-9117-fd870b38f922"
    assert result.model == "claude-sonnet-4-5-20250929"
    assert parser.activity() is None  # the tool answered; nothing is running at the end


def test_activity_follows_tool_use_and_api_retries() -> None:
    folder = RUNS / "claude_mock_tool_streamjson"
    parser = StreamJsonParser()
    seen = []
    for line in (folder / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert "Bash: echo hello-from-tool" in seen
    assert seen[-1] is None
    retry = StreamJsonParser()
    retry.feed((RUNS / "claude_mock_overloaded_529_streamjson" / "stdout").read_bytes().split(b"\n", 2)[1] + b"\n")
    assert retry.activity() == "API retry 1/1 (529)"


def test_an_empty_stdin_is_an_ordinary_failure_with_the_clis_words() -> None:
    _, result = replay("claude_empty_stdin")
    assert result.failed and result.error_kind is None
    assert result.error is not None and "Input must be provided" in result.error


def test_the_agents_own_words_never_classify_a_failure() -> None:
    """A crash whose last reply talks about API keys is the task's failure, not an auth failure."""
    parser = StreamJsonParser()
    parser.feed(
        b'{"type":"assistant","message":{"model":"claude-x","content":[{"type":"text",'
        b'"text":"Fixed: Invalid API key now returns 401 and the server logs ECONNREFUSED"}]}}\n'
    )
    result = parser.finish(ProcessOutcome(exit_code=1, duration_s=1.0, stderr_tail="Segmentation fault"))
    assert result.failed and result.error_kind is None


@pytest.mark.parametrize(
    ("facts", "kind"),
    [
        (Facts(error_code="authentication_failed"), ErrorKind.AUTH),
        (Facts(api_status=403), ErrorKind.AUTH),
        (Facts(text="OAuth token has expired"), ErrorKind.AUTH),
        (Facts(api_status=404, api_type="not_found_error"), ErrorKind.BAD_MODEL),
        (Facts(api_status=503), ErrorKind.OVERLOADED),
        (Facts(api_type="overloaded_error"), ErrorKind.OVERLOADED),
        (Facts(api_error="connection_failed"), ErrorKind.NETWORK),
        (Facts(stderr="Error: socket hang up", text="fetch failed"), ErrorKind.NETWORK),
        (Facts(error_code="rate_limit"), ErrorKind.RATE_LIMITED),
        (Facts(subtype="error_max_turns", max_turns=7), ErrorKind.MAX_TURNS),
        (Facts(subtype="error_during_execution", errors=("something odd",)), None),
        (Facts(), None),
    ],
)
def test_classify_reads_structured_fields_first(facts: Facts, kind: ErrorKind | None) -> None:
    found = classify(facts)
    assert (found[0] if found else None) is kind


def big_line(event: dict[str, object]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def test_huge_tool_events_are_skimmed_but_tool_errors_and_results_are_read() -> None:
    parser = StreamJsonParser()
    write = {
        "type": "assistant",
        "message": {
            "model": "claude-x",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"content": "é" * 1_500_000}}],
        },
    }
    parser.feed(big_line(write))
    assert parser.activity() == "Write"
    ok = {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x" * 2_000_000}]}}
    parser.feed(big_line(ok))
    assert parser.activity() is None and parser.tool_errors == []
    failed = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "is_error": True, "content": "boom " * 400_000}]},
    }
    parser.feed(big_line(failed))
    assert len(parser.tool_errors) == 1 and parser.tool_errors[0].startswith("boom boom")
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "done " * 300_000, "num_turns": 3}
    parser.feed(big_line(result))
    final = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert not final.failed and final.num_turns == 3 and final.final_text.startswith("done done")
