"""The codex backend's parser over real `codex exec --json` captures (tests/fixtures/codex/, Codex 0.169.0)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents.codex.activity import readable_lines
from ralphloop.agents.codex.parser import CodexJsonParser
from ralphloop.agents.codex.prices import cost_usd
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "codex"
NOW = datetime(2026, 11, 20, 23, 4, 21, tzinfo=UTC)  # when the captures ran
ROLLOUT = "rollout-2026-11-20T23-04-21-01a1fb34-269c-75a3-b001-6ba1b3044dfd.jsonl"


def parse(name: str, *, model: str | None = "gpt-5.1-codex", home: Path | None = None, chunk: int = 0) -> AgentResult:
    folder = FIXTURES / name
    stdout = (folder / "stdout").read_bytes()
    parser = CodexJsonParser(NOW, model=model, codex_home=home)
    pieces = [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]
    for piece in pieces:
        parser.feed(piece)
    code = int((folder / "rc").read_text())
    outcome = ProcessOutcome(
        exit_code=code, duration_s=1.0, timed_out=code == 124, stderr_tail=(folder / "stderr").read_text()
    )
    return parser.finish(outcome)


@pytest.mark.parametrize("chunk", [0, 7])
def test_a_finished_run_gives_the_last_agent_message_and_its_tokens(chunk: int) -> None:
    result = parse("mock_ok_json", chunk=chunk)
    assert not result.failed and result.error is None
    assert result.final_text == "Hello from mock. <promise>COMPLETE</promise>"
    # input_tokens 1500 includes the 1000 cached ones: ralph counts cache reads apart.
    assert result.usage == TokenUsage(
        input_tokens=500, output_tokens=25, cache_creation_tokens=0, cache_read_tokens=1000
    )
    assert result.tokens == 1525
    assert result.session_id == "01a1fb34-1ba8-7943-8887-28aa27c2eefe"
    assert result.model == "gpt-5.1-codex" and result.num_turns == 1
    assert result.cost_usd == pytest.approx((500 * 1.25 + 1000 * 0.125 + 25 * 10.0) / 1e6)


def test_a_model_without_a_price_has_no_cost_and_no_model_none() -> None:
    assert parse("mock_ok_json", model="my-local-model").cost_usd is None
    assert parse("mock_ok_json", model=None).cost_usd is None
    assert cost_usd("gpt-5-2025-08-07", TokenUsage(1_000_000, 0, 0, 0)) == pytest.approx(1.25)


def test_a_tool_run_shows_the_command_while_it_runs() -> None:
    parser = CodexJsonParser(NOW)
    lines = (FIXTURES / "mock_tool_json" / "stdout").read_bytes().splitlines(keepends=True)
    seen = []
    for line in lines:
        parser.feed(line)
        seen.append(parser.activity())
    assert "Shell: echo hello-from-tool" in seen
    assert parser.activity() is None  # the command completed
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.final_text.endswith("<promise>COMPLETE</promise>")
    assert result.usage == TokenUsage(1000, 50, 0, 2000)


@pytest.mark.parametrize(
    "name", ["mock_usage_limit_plus_json", "mock_usage_limit_free_json", "mock_usage_limit_team_json"]
)
def test_the_usage_limit_and_its_reset_from_the_sentence(name: str) -> None:
    result = parse(name)
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None
    assert result.usage_limit.vendor == "codex"
    assert result.usage_limit.resets_at == datetime(2026, 11, 21, 1, 4, tzinfo=UTC)
    assert result.usage_limit.message.startswith("You’ve hit your usage limit.")


def test_the_session_file_gives_the_exact_reset_and_the_model(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / ROLLOUT, day / ROLLOUT)
    result = parse("mock_usage_limit_plus_json", model=None, home=tmp_path)
    assert result.usage_limit is not None
    assert result.usage_limit.resets_at == datetime(2026, 11, 21, 1, 4, 21, tzinfo=UTC)  # 1795223061
    assert result.usage_limit.kind == "five_hour" and result.usage_limit.source == "session_file"
    assert result.model == "gpt-5.1-codex"


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("mock_rate_limit_429_json", ErrorKind.RATE_LIMITED, "429 Too Many Requests"),
        ("mock_server_500_json", ErrorKind.OVERLOADED, "high demand"),
        ("mock_auth_401_json", ErrorKind.AUTH, "codex login"),
        ("mock_insufficient_quota_json", ErrorKind.BILLING, "Quota exceeded"),
    ],
)
def test_each_failure_has_its_kind(name: str, kind: ErrorKind, words: str) -> None:
    result = parse(name)
    assert result.failed and result.error_kind is kind and result.usage_limit is None
    assert result.error is not None and words in result.error
    assert result.usage is None and result.cost_usd is None


def test_a_run_stopped_while_codex_retried_says_what_it_waited_for() -> None:
    result = parse("exec_json_noauth")
    assert result.failed and result.timed_out and result.error_kind is None
    assert result.error is not None and "waiting for network" in result.error


def test_a_clean_exit_without_a_finished_turn_is_a_failed_attempt() -> None:
    parser = CodexJsonParser(NOW)
    parser.feed(b'{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n')
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.failed and result.error_kind is None and "turn.completed" in (result.error or "")


def test_the_agents_own_words_about_limits_are_not_a_limit() -> None:
    parser = CodexJsonParser(NOW)
    text = "You’ve hit your usage limit. Try again in 2 days 17 hours."
    parser.feed(b'{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"' + text.encode() + b'"}}\n')
    parser.feed(b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n')
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert not result.failed and result.usage_limit is None


def test_the_monitor_reads_a_codex_log() -> None:
    shown = []
    for line in (FIXTURES / "mock_tool_json" / "stdout").read_text().splitlines():
        shown += readable_lines(line) or []
    assert "⚙ Shell: echo hello-from-tool" in shown
    assert "Hello from mock. <promise>COMPLETE</promise>" in shown
    assert shown[-1] == "■ turn completed: 3,000 in · 50 out"
    assert readable_lines("plain text") is None
    assert readable_lines('{"type":"assistant"}') is None  # another CLI's JSON is left to its reader
