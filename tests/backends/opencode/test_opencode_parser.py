"""The opencode backend's parser over real `opencode run --format json` captures (tests/fixtures/opencode/, opencode
1.18.33), and over what a broken or hostile stream may hold."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents import saved
from ralphloop.agents.opencode.activity import readable_lines, sniff
from ralphloop.agents.opencode.parser import OpencodeJsonParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "opencode"
NOW = datetime(2026, 11, 27, 15, 0, tzinfo=UTC)  # when the captures ran
MODEL = "fake/fake-coder"


def outcome_of(name: str, **changes: object) -> ProcessOutcome:
    folder = FIXTURES / name
    code = int((folder / "rc").read_text())
    fields: dict[str, object] = {
        "exit_code": code if code != 124 else -15,
        "duration_s": 1.0,
        "timed_out": code == 124,
        "stderr_tail": (folder / "stderr").read_text()[-4096:],
    }
    fields.update(changes)
    return ProcessOutcome(**fields)  # type: ignore[arg-type]


def parse(name: str, *, chunk: int = 0, model: str | None = MODEL, **changes: object) -> AgentResult:
    stdout = (FIXTURES / name / "stdout").read_bytes()
    parser = OpencodeJsonParser(NOW, model=model)
    pieces = [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]
    for piece in pieces:
        parser.feed(piece)
    return parser.finish(outcome_of(name, **changes))


def feed(*lines: str | bytes, code: int = 0) -> AgentResult:
    parser = OpencodeJsonParser(NOW)
    for line in lines:
        parser.feed(line if isinstance(line, bytes) else line.encode())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0))


def event(kind: str, **part: object) -> str:
    return json.dumps({"type": kind, "timestamp": 1, "sessionID": "ses_x", "part": {"messageID": "m1", **part}}) + "\n"


STEP = event("step_finish", reason="stop", tokens={"input": 10, "output": 2, "reasoning": 0, "cache": {}}, cost=0)


@pytest.mark.parametrize("chunk", [0, 7])
def test_a_finished_run_gives_its_text_tokens_and_cost(chunk: int) -> None:
    result = parse("mock_ok_json", chunk=chunk)
    assert not result.failed and result.error is None and result.error_kind is None
    assert result.final_text == "Hello from the fake. <promise>COMPLETE</promise>"
    # The fake sent 1200 prompt tokens (200 cached) and 50 completion tokens (10 reasoning): opencode counts
    # input 1000, cache.read 200, output 40, reasoning 10; ralph counts the reasoning tokens as output.
    assert result.usage == TokenUsage(
        input_tokens=1000, output_tokens=50, cache_creation_tokens=0, cache_read_tokens=200
    )
    assert result.tokens == 1250
    assert result.cost_usd == pytest.approx(0.0025)  # opencode's own arithmetic, at the prices of its config
    assert result.session_id == "ses_de27a2d0effe5Ocu9vyV0rWuc2"
    assert (result.num_turns, result.stop_reason, result.model) == (1, "stop", MODEL)


def test_a_tool_run_sums_its_steps_and_keeps_only_the_last_messages_text() -> None:
    parser = OpencodeJsonParser(NOW)
    seen = []
    for line in (FIXTURES / "mock_tool_json" / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert "Thinking" in seen
    assert "Write: /tmp/opencode-capture/work/notes.md" in seen
    assert parser.activity() is None  # the last step finished
    result = parser.finish(outcome_of("mock_tool_json"))
    assert not result.failed
    assert result.final_text == "Wrote notes.md. <promise>COMPLETE</promise>"  # not the first step's "Writing …"
    assert result.usage == TokenUsage(input_tokens=3000, output_tokens=130, cache_read_tokens=7500)
    assert result.cost_usd == pytest.approx(0.00482 + 0.00274 + 0.00323)
    assert result.num_turns == 3
    # Under `edits` the bash tool is denied, so opencode does not offer it: the call the fake made was refused.
    assert result.permission_denials == ("Shell (not offered)",)
    assert result.tool_errors == ()


def test_a_failing_shell_command_is_a_tool_error() -> None:
    result = parse("mock_tool_all_json")
    assert not result.failed and result.final_text.endswith("<promise>COMPLETE</promise>")
    assert result.tool_errors == ("exit 3: (no output)",)
    assert result.permission_denials == ()


def test_the_ask_level_leaves_the_agent_without_its_edit_tools() -> None:
    result = parse("mock_ask_json")
    assert not result.failed and result.final_text == "I may not edit files here."
    assert result.permission_denials == ("Write (not offered)",)


def test_a_rejected_permission_stops_the_session_and_is_a_denial() -> None:
    # An `ask` (here: a file outside the project) is rejected by `opencode run`, which then ends the session.
    result = parse("mock_rejected_json")
    assert not result.failed and result.final_text == ""
    assert result.permission_denials == ("Read: /etc/hostname",)
    assert result.stop_reason == "tool-calls"


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("mock_auth_401_json", ErrorKind.AUTH, "opencode auth login"),
        ("mock_model_404_json", ErrorKind.BAD_MODEL, "does not exist"),
        ("mock_bad_model_json", ErrorKind.BAD_MODEL, "Model not found: fake/no-such-model"),
        ("mock_rate_limit_429_json", ErrorKind.RATE_LIMITED, "Rate limit reached"),
        ("mock_insufficient_quota_json", ErrorKind.BILLING, "exceeded your current quota"),
        ("mock_server_500_json", ErrorKind.OVERLOADED, "server had an error"),
        ("mock_offline_json", ErrorKind.NETWORK, "Cannot connect to API"),
    ],
)
def test_each_failure_has_its_kind(name: str, kind: ErrorKind, words: str) -> None:
    result = parse(name)
    assert result.failed and result.is_error and result.error_kind is kind and result.usage_limit is None
    assert result.error is not None and words in result.error
    assert result.usage is None and result.cost_usd is None and result.final_text == ""


def test_a_usage_limit_gives_its_reset_from_the_headers() -> None:
    result = parse("mock_usage_limit_429_json")
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT
    limit = result.usage_limit
    assert limit is not None
    assert (limit.vendor, limit.source) == ("opencode", "api_error")
    assert limit.resets_at == datetime(2026, 11, 28, 4, 0, tzinfo=UTC)  # x-ratelimit-reset: 1795838400
    assert limit.message == "You have reached your usage limit for this billing period."


def test_openais_usage_limit_relayed_gives_its_reset_from_the_body_and_headers() -> None:
    result = parse("usage_limit_plus_json")  # the corpus capture: the openai provider, a plus plan's 5-hour window
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT
    limit = result.usage_limit
    assert limit is not None
    assert limit.resets_at == datetime(2026, 11, 21, 1, 15, 15, tzinfo=UTC)  # resets_at / x-codex-primary-reset-at
    assert (limit.kind, limit.message) == ("five_hour", "The usage limit has been reached")


def test_a_run_stopped_while_opencode_waited_says_what_it_waited_for() -> None:
    # A 429 with `retry-after: 7200`: opencode waits two hours in silence; the idle timeout ends it.
    result = parse("mock_usage_limit_waiting_json", idle_limit_s=600.0)
    # What it waited out was a spent usage limit: that is the iteration's kind (no reset: opencode printed none).
    assert result.failed and result.timed_out and result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None and result.usage_limit.resets_at is None
    assert "You have reached your usage limit" in result.usage_limit.message
    assert result.error is not None and result.error.startswith("no output for 600 s (the idle timeout)")
    assert "opencode was retrying: AI_APICallError: You have reached your usage limit" in result.error


def test_opencode_offline_is_a_timeout_that_says_what_it_retried() -> None:
    # shared corpus: no network, stopped by `timeout` after 40 s while opencode retried (`--print-logs` at INFO).
    result = parse("run_json_noauth_logs")
    assert result.failed and result.timed_out and result.error_kind is None
    assert result.error is not None and result.error.startswith("timed out after 1s")
    assert "opencode was retrying: AI_APICallError: Cannot connect to API" in result.error
    assert "models.dev" not in result.error  # its model catalogue's download is not the run's error


def test_an_interrupted_run_is_not_classified() -> None:
    result = parse("mock_auth_401_json", interrupted=True, exit_code=-2)
    assert result.failed and result.interrupted and result.error_kind is None


def test_exit_0_with_an_error_event_is_a_failure() -> None:
    result = parse("mock_auth_401_json", exit_code=0)
    assert result.failed and result.error_kind is ErrorKind.AUTH


def test_no_output_at_all_is_a_failed_attempt() -> None:
    result = feed()
    assert result.failed and result.error_kind is None and "no step_finish" in (result.error or "")


def test_a_crash_names_its_last_log_line_and_its_kind() -> None:
    parser = OpencodeJsonParser(NOW)
    stderr = (FIXTURES / "mock_insufficient_quota_json" / "stderr").read_text()
    result = parser.finish(ProcessOutcome(exit_code=1, duration_s=1.0, stderr_tail=stderr[-4096:]))
    assert result.failed and result.error_kind is ErrorKind.BILLING


def test_the_agents_own_words_are_never_an_error_or_a_limit() -> None:
    said = "Error: 429 Too Many Requests. You have reached your usage limit; it resets at 5pm. Unauthorized."
    result = feed(event("text", text=said), STEP)
    assert not result.failed and result.error_kind is None and result.usage_limit is None
    assert result.final_text == said


def test_broken_and_hostile_lines_are_skipped() -> None:
    lines = [
        b'{"type":"text","sessionID":"ses_x","part":{"messageID":"m1","text":"cut',  # truncated, then a newline
        b"\n\xff\xfe not utf-8 \xc3\x28\n",
        b'{"type":"assistant","message":{"content":"another CLI"}}\n',
        b'{"type":"text","part":{"text":"no session id"}}\n',
        b"[1, 2, 3]\n",
        b'{"type":"step_finish","sessionID":"ses_x","part":{"tokens":{"input":-5,"output":true,"cache":"x"},"cost":-1}}\n',
        b"x" * (20 * 1024 * 1024) + b"\n",  # a 20 MB line
        event("text", text="kept").encode(),
        STEP.encode(),
    ]
    result = feed(*lines)
    assert not result.failed and result.final_text == "kept"
    assert result.usage == TokenUsage(input_tokens=10, output_tokens=2)  # the hostile step counted nothing
    assert result.cost_usd is None  # opencode priced nothing: no cost, never a guess


def test_the_monitor_reads_an_opencode_log() -> None:
    shown: list[str] = []
    for line in (FIXTURES / "mock_tool_json" / "stdout").read_text().splitlines():
        shown += readable_lines(line) or []
    assert "⚙ Write: /tmp/opencode-capture/work/notes.md" in shown
    assert any(line.startswith("✗ Shell (not offered): Model tried to call unavailable tool 'bash'") for line in shown)
    assert "Wrote notes.md. <promise>COMPLETE</promise>" in shown
    assert shown[-1] == "■ step done: 500 in · 3,500 cached · 40 out · $0.0032"
    stderr = (FIXTURES / "mock_usage_limit_waiting_json" / "stderr").read_text().splitlines()[-1]
    assert readable_lines("[stderr] " + stderr) == [
        "⚠ opencode: stream error: AI_APICallError: You have reached your usage limit for this billing period."
    ]
    assert readable_lines("plain text") is None
    assert readable_lines("[stderr] plain text") is None
    assert readable_lines('{"type":"assistant"}') is None  # another CLI's JSON is left to its reader
    assert readable_lines('{"type":"text","part":{"text":"x"}}') is None  # no session id: not opencode's


def test_a_saved_log_is_recognised_and_read_back() -> None:
    stdout = (FIXTURES / "mock_tool_json" / "stdout").read_bytes()
    assert saved.detect(stdout) == "opencode-json"
    assert saved.final_text([stdout], "opencode-json") == "Wrote notes.md. <promise>COMPLETE</promise>"
    for name in ("codex", "claude"):
        other = next((Path(__file__).parents[2] / "fixtures" / name).rglob("stdout"), None)
        if other is not None:
            events = [json.loads(line) for line in other.read_text().splitlines() if line.startswith("{")]
            assert not sniff(events), other
