"""The gemini backend's parser over real `gemini --output-format stream-json` captures (tests/fixtures/gemini/,
Gemini CLI 0.61.0): the final text, tokens, model, cost, activity and the monitor's lines."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from ralphloop.agents.gemini.activity import readable_lines, sniff
from ralphloop.agents.gemini.parser import GeminiStreamParser
from ralphloop.agents.gemini.prices import cost_usd
from ralphloop.core.protocols import AgentResult, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "gemini"
NOW = datetime(2026, 11, 20, 23, 8, tzinfo=UTC)  # when the corpus captures ran
PROMISE = "<promise>COMPLETE</promise>"


def outcome(name: str) -> ProcessOutcome:
    folder = FIXTURES / name
    code = int((folder / "rc").read_text())
    return ProcessOutcome(
        exit_code=code, duration_s=1.0, timed_out=code == 124, stderr_tail=(folder / "stderr").read_text()
    )


def parse(name: str, *, model: str | None = None, chunk: int = 0, now: datetime = NOW) -> AgentResult:
    stdout = (FIXTURES / name / "stdout").read_bytes()
    parser = GeminiStreamParser(now, model=model)
    for piece in [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]:
        parser.feed(piece)
    return parser.finish(outcome(name))


@pytest.mark.parametrize("chunk", [0, 5])
def test_a_finished_run_gives_the_text_after_the_last_tool_and_the_tokens_of_every_model(chunk: int) -> None:
    result = parse("mock_ok_streamjson", chunk=chunk)
    assert not result.failed and result.error is None and not result.is_error
    assert result.final_text == f"Hello from mock. {PROMISE}"
    assert result.session_id == "fa967157-b4ac-416b-b9db-5804fd8106d4"
    # Two models (the router's and the conversation's), each: prompt 1200 of which 400 cached, total 1245, of
    # which 15 candidates and 30 thinking tokens: output is total - prompt.
    assert result.usage == TokenUsage(input_tokens=1600, output_tokens=90, cache_read_tokens=800)
    assert result.tokens == 2490
    assert result.model == "gemini-3.8-flash"  # a tie: the later one, asked after the router
    lite = 800 * 0.30 + 400 * 0.03 + 45 * 2.5
    flash = 800 * 0.75 + 400 * 0.075 + 45 * 3.75  # 3.8 Flash's introductory rate in 2026
    assert result.cost_usd == round((lite + flash) / 1e6, 6)


def test_the_model_asked_for_is_the_model_and_its_price() -> None:
    result = parse("mock_ok_streamjson_model", model="gemini-2.5-pro")
    assert result.model == "gemini-2.5-pro"
    assert result.cost_usd == pytest.approx((800 * 1.25 + 400 * 0.125 + 45 * 10.0) / 1e6)


def test_the_router_run_names_the_model_that_did_the_work() -> None:
    result = parse("e2e_router_ok")
    assert result.model == "gemini-3.8-flash"  # 2037 tokens against the router's 310
    assert result.usage == TokenUsage(input_tokens=1800, output_tokens=47, cache_read_tokens=500)


def test_a_price_unknown_for_one_model_is_no_cost_at_all() -> None:
    assert cost_usd({"gemini-2.5-pro": TokenUsage(1000, 10), "gemini-9": TokenUsage(1, 1)}, date(2026, 11, 1)) is None
    assert cost_usd({"gemini-9": TokenUsage(0, 0)}, date(2026, 11, 1)) is None  # nothing counted
    # A Pro model over its 200k-token prompt tier: which request crossed it is not known.
    assert cost_usd({"gemini-2.5-pro": TokenUsage(150_000, 10, 0, 60_000)}, date(2026, 11, 1)) is None
    assert cost_usd({"gemini-2.5-pro": TokenUsage(150_000, 0, 0, 50_000)}, date(2026, 11, 1)) == pytest.approx(
        (150_000 * 1.25 + 50_000 * 0.125) / 1e6
    )


def test_introductory_flash_prices_end_with_2026() -> None:
    usage = {"gemini-3.8-flash": TokenUsage(1_000_000, 0)}
    assert cost_usd(usage, date(2026, 12, 31)) == pytest.approx(0.75)
    assert cost_usd(usage, date(2027, 1, 1)) == pytest.approx(1.5)


def test_a_tool_run_shows_the_tool_while_it_runs_and_its_tokens() -> None:
    parser = GeminiStreamParser(NOW)
    seen = []
    for line in (FIXTURES / "mock_tool_streamjson" / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert "Shell: echo hello-from-tool" in seen
    assert parser.activity() is None
    result = parser.finish(outcome("mock_tool_streamjson"))
    assert result.final_text == f"Hello from mock. {PROMISE}" and not result.tool_errors
    assert result.usage == TokenUsage(input_tokens=2500, output_tokens=110, cache_read_tokens=800)


def test_the_real_cli_writing_a_file_counts_thinking_tokens_as_output() -> None:
    result = parse("e2e_tool_write", model="gemini-2.5-pro")
    assert result.final_text == f"All done. {PROMISE}"
    assert result.usage == TokenUsage(input_tokens=1500, output_tokens=132, cache_read_tokens=5500)


@pytest.mark.parametrize(
    ("name", "denied"),
    [("e2e_shell_denied", "run_shell_command(echo hi > x.txt)"), ("e2e_ask_write", "write_file(w.txt)")],
)
def test_a_tool_the_approval_mode_keeps_out_is_a_permission_denial(name: str, denied: str) -> None:
    result = parse(name)
    assert result.permission_denials == (denied,) and not result.tool_errors and not result.failed


def test_a_command_that_failed_is_a_tool_error() -> None:
    result = parse("e2e_yolo_shell")
    assert result.tool_errors == ("Command exited with code: 3",) and not result.permission_denials


def test_text_said_before_a_tool_call_is_not_the_final_text() -> None:
    parser = GeminiStreamParser(NOW)
    for event in (
        {"type": "message", "role": "assistant", "content": f"I will now finish. {PROMISE}", "delta": True},
        {"type": "tool_use", "tool_name": "read_file", "tool_id": "t1", "parameters": {"file_path": "a.py"}},
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": ""},
        {"type": "message", "role": "assistant", "content": "Still work to do.", "delta": True},
        {"type": "result", "status": "success", "stats": {}},
    ):
        parser.feed(json.dumps(event).encode() + b"\n")
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.final_text == "Still work to do." and result.usage is None and result.cost_usd is None


def test_the_prompt_echo_is_never_the_final_text() -> None:
    parser = GeminiStreamParser(NOW)
    parser.feed(json.dumps({"type": "message", "role": "user", "content": PROMISE}).encode() + b"\n")
    parser.feed(b'{"type":"result","status":"success","stats":{}}\n')
    assert parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0)).final_text == ""


def test_the_monitor_reads_a_gemini_log() -> None:
    shown = []
    for line in (FIXTURES / "mock_tool_streamjson" / "stdout").read_text().splitlines():
        shown += readable_lines(line) or []
    assert shown == [
        "⚙ Shell: echo hello-from-tool",
        "Hello from mock.",
        PROMISE,
        "■ result: success: 3,300 in · 110 out",
    ]  # the prompt's echo ("run echo") is not shown
    failed = (FIXTURES / "e2e_quota_daily" / "stdout").read_text().splitlines()[-1]
    [said] = readable_lines(failed) or [""]
    assert said.startswith("✗ result: [API Error: You have exhausted your daily quota on this model.] Please wait")
    denied = (FIXTURES / "e2e_shell_denied" / "stdout").read_text().splitlines()[3]
    assert readable_lines(denied) == [
        '✗ tool error: Tool "run_shell_command" not found. Did you mean one of: "update_topic", "grep_search", '
        '"replace"?'
    ]


def test_other_clis_lines_are_left_to_their_readers() -> None:
    assert readable_lines("plain text") is None
    assert readable_lines('{"type":"result","subtype":"success","is_error":false,"result":"x"}') is None  # Claude
    assert readable_lines('{"type":"error","message":"Reconnecting..."}') is None  # Codex
    assert readable_lines('{"type":"assistant"}') is None


def test_sniff_knows_a_gemini_log_and_no_other() -> None:
    head = [json.loads(line) for line in (FIXTURES / "mock_ok_streamjson" / "stdout").read_text().splitlines()]
    assert sniff(head) and sniff(head[1:])
    assert not sniff([{"type": "system", "subtype": "init", "session_id": "x"}, {"type": "result", "subtype": "x"}])
    assert not sniff([{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"}])


PRO_LONG_SESSION = "session-2026-11-27T15-00-9d1b27b3.jsonl"


def pro_long(home: Path | None) -> AgentResult:
    parser = GeminiStreamParser(NOW, model="gemini-2.5-pro", gemini_home=home)
    parser.feed((FIXTURES / "e2e_pro_long" / "stdout").read_bytes())
    return parser.finish(outcome("e2e_pro_long"))


def test_a_pro_run_over_200k_prompt_tokens_is_priced_request_by_request_from_the_session_file(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    (chats / PRO_LONG_SESSION).write_bytes((FIXTURES / "e2e_pro_long" / PRO_LONG_SESSION).read_bytes())
    # A request of 150k prompt tokens at the base rates, one of 250k at the long-context rates.
    first = 50_000 * 1.25 + 100_000 * 0.125 + 50 * 10.0
    second = 110_000 * 2.5 + 140_000 * 0.25 + 60 * 15.0
    assert pro_long(tmp_path).cost_usd == round((first + second) / 1e6, 6)


def test_without_its_session_file_a_long_pro_run_has_no_cost(tmp_path: Path) -> None:
    assert pro_long(None).cost_usd is None
    assert pro_long(tmp_path).cost_usd is None  # no such file
    chats = tmp_path / "tmp" / "other" / "chats"
    chats.mkdir(parents=True)
    text = (FIXTURES / "e2e_pro_long" / PRO_LONG_SESSION).read_text()
    # Another session's file under the same name prefix is not this run's.
    (chats / PRO_LONG_SESSION).write_text(text.replace("9d1b27b3-caef", "9d1b27b3-0000", 1))
    assert pro_long(tmp_path).cost_usd is None
    # This run's file, its requests not adding up to the stream's sums (a request missing), prices nothing.
    (chats / PRO_LONG_SESSION).write_text("\n".join(line for line in text.splitlines() if '"input":250000' not in line))
    assert pro_long(tmp_path).cost_usd is None
    assert pro_long(tmp_path).usage == TokenUsage(160_000, 110, 0, 240_000)


def test_a_command_agents_log_offers_gemini_lines_to_gemini_s_reader_first() -> None:
    """A command agent may run `gemini` itself: its `result` line is read as Gemini's, not as Claude's."""
    from ralphloop.agents.log_readers import log_reader

    last = (FIXTURES / "mock_tool_streamjson" / "stdout").read_text().splitlines()[-1]
    assert log_reader("command")(last) == ["■ result: success: 3,300 in · 110 out"]
    assert log_reader("command")('{"type":"result","subtype":"success","is_error":false}') == ["■ result: success"]
