"""The copilot backend's parser over real `copilot --output-format json` captures (tests/fixtures/copilot/,
Copilot CLI 1.0.102), and over hostile output: broken lines, a flood, the agent's own words about errors."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ralphloop.agents.copilot import usage_file
from ralphloop.agents.copilot.activity import readable_lines, sniff, tool_activity
from ralphloop.agents.copilot.backend import account
from ralphloop.agents.copilot.parser import CopilotJsonParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "copilot"
NOW = datetime(2026, 11, 27, 14, 47, tzinfo=UTC)  # when the captures ran


def parse(name: str, *, usage: bool = True, model: str | None = "gpt-4.1", chunk: int = 0) -> AgentResult:
    folder = FIXTURES / name
    stdout = (folder / "stdout").read_bytes()
    path = folder / "usage.json"
    parser = CopilotJsonParser(NOW, model=model, usage_path=str(path) if usage and path.exists() else None)
    pieces = [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]
    for piece in pieces:
        parser.feed(piece)
    code = int((folder / "rc").read_text())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=(folder / "stderr").read_text()))


def event(kind: str, data: dict[str, Any] | None = None, **extra: Any) -> bytes:
    return (json.dumps({"type": kind, "data": data or {}, **extra}) + "\n").encode()


def finished(exit_code: int = 0) -> bytes:
    return (json.dumps({"type": "result", "sessionId": "s-1", "exitCode": exit_code, "usage": {}}) + "\n").encode()


def run(*lines: bytes, exit_code: int = 0, stderr: str = "") -> AgentResult:
    parser = CopilotJsonParser(NOW)
    for line in lines:
        parser.feed(line)
    return parser.finish(ProcessOutcome(exit_code=exit_code, duration_s=1.0, stderr_tail=stderr))


@pytest.mark.parametrize("chunk", [0, 7])
def test_a_finished_run_gives_the_last_message_its_model_and_the_usage_files_tokens(chunk: int) -> None:
    result = parse("mock_ok_json", chunk=chunk, model=None)
    assert not result.failed and result.error is None and result.error_kind is None
    assert result.final_text == "Hello from mock. <promise>COMPLETE</promise>"
    assert result.model == "gpt-4.1"  # assistant.message's own model: ralph asked for none here
    # prompt_tokens 1500 include the 1000 cached ones: ralph counts cache reads apart.
    assert result.usage == TokenUsage(input_tokens=500, output_tokens=25, cache_read_tokens=1000)
    assert result.tokens == 1525
    assert result.session_id == "3ec3ef34-f8fe-42f2-87d8-16dc9d8801f5" and result.num_turns == 1
    assert result.cost_usd is None  # a custom provider's calls are not charged by GitHub: no guess


def test_without_the_usage_file_there_are_no_tokens() -> None:
    result = parse("mock_ok_json", usage=False)
    assert not result.failed and result.usage is None and result.tokens is None and result.cost_usd is None


def test_a_tool_run_shows_each_tool_while_it_runs_and_records_refusals_and_failures() -> None:
    parser = CopilotJsonParser(NOW)
    seen = []
    for line in (FIXTURES / "mock_tool_json" / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert "Create: /tmp/cpx/caprun/mock_tool_json/work/work.txt" in seen
    assert "Shell: rm README.md" in seen and "Shell: ls missing-dir" in seen
    assert parser.activity() is None  # every tool completed
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.final_text == "Created work.txt. <promise>COMPLETE</promise>"
    assert result.permission_denials == ("Shell: rm README.md",)  # `rm` under --allow-tool write: refused
    assert len(result.tool_errors) == 1 and "missing-dir" in result.tool_errors[0]  # `ls` exited 2
    assert result.num_turns == 4 and not result.failed


def test_the_tool_runs_tokens_are_summed_over_its_model_calls() -> None:
    result = parse("mock_tool_json")
    # what the fake sent over four calls (3000+100+100+4000 in, 2000+30+30+3500 cached, 40+20+20+60 out)
    assert result.usage == TokenUsage(input_tokens=7200 - 5560, output_tokens=140, cache_read_tokens=5560)


def test_the_weekly_limit_is_the_usage_limit_with_its_reset_as_an_instant() -> None:
    result = parse("mock_weekly_limit_429_json")
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT and result.is_error
    limit = result.usage_limit
    assert limit is not None and limit.vendor == "copilot" and limit.kind == "weekly"
    assert limit.resets_at == datetime(2026, 11, 27, 16, 47, tzinfo=UTC)  # "try again in 2 hours" after NOW
    assert limit.message == "You have exceeded your weekly rate limit. Please try again in 2 hours."


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("mock_rate_limit_429_json", ErrorKind.RATE_LIMITED, "Please wait a moment"),
        ("mock_rate_limit_429_retried_json", ErrorKind.RATE_LIMITED, "retried 5 times"),
        ("mock_server_500_json", ErrorKind.OVERLOADED, "500 Internal server error"),
        ("mock_quota_402_json", ErrorKind.BILLING, "monthly quota"),
        ("mock_auth_401_json", ErrorKind.AUTH, "COPILOT_PROVIDER_API_KEY"),
        ("mock_bad_model_404_json", ErrorKind.BAD_MODEL, "--model"),
        ("json_noauth", ErrorKind.AUTH, "copilot login"),
        ("p_json_noauth", ErrorKind.AUTH, "No authentication information found"),
        ("p_json_faketoken_nonet", ErrorKind.NETWORK, "network fetch failed"),
    ],
)
def test_each_failure_has_its_kind(name: str, kind: ErrorKind, words: str) -> None:
    result = parse(name)
    assert result.failed and result.error_kind is kind and result.usage_limit is None
    assert result.error is not None and words in result.error
    assert result.cost_usd is None


def test_the_agents_own_words_about_errors_and_limits_are_not_an_error() -> None:
    words = (
        "Error: No authentication information found. 429 You have exceeded your weekly rate limit. "
        "Try again in 2 hours."
    )
    result = run(event("assistant.message", {"content": words, "model": "gpt-4.1"}), finished(0))
    assert not result.failed and result.error_kind is None and result.usage_limit is None
    assert result.final_text == words


def test_a_tool_output_quoting_a_limit_is_not_a_limit() -> None:
    quoted = {"success": True, "toolCallId": "c", "result": {"content": "You've reached your weekly rate limit."}}
    result = run(event("tool.execution_complete", quoted), event("assistant.message", {"content": "ok"}), finished())
    assert not result.failed and result.usage_limit is None and result.tool_errors == ()


def test_exit_0_with_an_error_event_is_a_failure() -> None:
    error = {"errorType": "rate_limit", "statusCode": 429, "message": "429 You've hit your session rate limit."}
    result = run(event("session.error", error), finished(0), exit_code=0)
    assert result.failed and result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None and result.usage_limit.kind == "session"
    assert result.usage_limit.resets_at is None  # the sentence gave no reset: the policy's fallback wait


def test_an_error_a_sub_agent_met_is_not_the_runs() -> None:
    error = {"errorType": "quota", "message": "402 quota_exceeded"}
    result = run(
        event("session.error", error, agentId="sub-1"), event("assistant.message", {"content": "x"}), finished()
    )
    assert not result.failed


def test_the_code_of_the_failed_call_reaches_a_providers_error() -> None:
    failure = {"statusCode": 429, "errorCode": "user_model_rate_limited", "errorMessage": "{}"}
    error = {"errorType": "rate_limit", "statusCode": 429, "message": "429 Too many requests"}
    result = run(event("model.call_failure", failure), event("session.error", error), finished(1), exit_code=1)
    assert result.error_kind is ErrorKind.USAGE_LIMIT and result.usage_limit is not None
    assert result.usage_limit.kind == "model"


def test_no_output_at_all_is_a_failed_attempt() -> None:
    result = run(exit_code=0)
    assert result.failed and result.error_kind is None and "result event" in (result.error or "")
    assert result.final_text == ""


def test_a_result_with_a_non_zero_exit_code_is_a_failure() -> None:
    result = run(event("assistant.message", {"content": "half"}), finished(1), exit_code=0)
    assert result.failed and result.is_error and result.error == "Copilot reported exit code 1"


def test_a_result_without_an_exit_code_is_no_failure_of_its_own() -> None:
    result = run(event("assistant.message", {"content": "ok"}), b'{"type":"result","exitCode":"0"}\n')
    assert not result.failed and not result.is_error


def test_broken_lines_invalid_utf8_and_other_json_are_skipped() -> None:
    result = run(
        b'{"type":"assistant.message","data":{"content":"cut',
        b'\n\xff\xfe not utf-8 \x80\n[1, 2]\n"text"\n{"type": 3}\n',
        event("assistant.message", {"content": "the answer"}),
        finished(),
    )
    assert not result.failed and result.final_text == "the answer"


def test_a_20_mb_line_is_dropped_and_the_rest_is_read() -> None:
    huge = b'{"type":"assistant.message","data":{"content":"' + b"x" * (20 * 1024 * 1024) + b'"}}\n'
    result = run(huge[: 8 * 1024 * 1024], huge[8 * 1024 * 1024 :], event("assistant.message", {"content": "ok"}))
    assert result.final_text == "ok"


def test_a_flood_of_tools_that_never_finish_keeps_only_the_newest() -> None:
    parser = CopilotJsonParser(NOW)
    for n in range(5000):
        parser.feed(
            event(
                "tool.execution_start", {"toolCallId": f"c{n}", "toolName": "bash", "arguments": {"command": f"x{n}"}}
            )
        )
    assert parser.activity() == "Shell: x4999" and len(parser._tools) <= 20


def test_a_timeout_stays_a_timeout_and_says_what_copilot_was_retrying() -> None:
    parser = CopilotJsonParser(NOW)
    parser.feed(event("session.info", {"infoType": "model_retry", "message": "Request failed. Retrying..."}))
    result = parser.finish(ProcessOutcome(exit_code=-15, duration_s=60.0, timed_out=True))
    assert result.failed and result.timed_out and result.error_kind is None
    assert result.error is not None and "timed out" in result.error and "Retrying" in result.error


def test_an_empty_final_message_keeps_the_last_words() -> None:
    calls = {"content": "", "toolRequests": [{"name": "bash"}]}
    result = run(
        event("assistant.message", {"content": "Done. <promise>COMPLETE</promise>"}),
        event("assistant.message", calls),
        finished(),
    )
    assert result.final_text == "Done. <promise>COMPLETE</promise>"


def test_the_usage_file_charge_is_the_cost_only_when_complete(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "mock_ok_json" / "usage.json").read_text())
    charged = usage_file.facts({**data, "totalNanoAiu": 2_500_000_000, "aiCreditsStatus": "complete"})
    assert charged.cost_usd == pytest.approx(0.025)  # 2.5 AI credits at $0.01
    assert usage_file.facts({**data, "totalNanoAiu": 2_500_000_000, "aiCreditsStatus": "partial"}).cost_usd is None
    assert usage_file.facts({**data, "totalNanoAiu": float("inf"), "aiCreditsStatus": "complete"}).cost_usd is None
    assert charged.model == "gpt-4.1" and charged.premium_requests == 0


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'{"modelMetrics": {"m": {"usage": {"inputTokens": -5}}}}'])
def test_an_odd_usage_file_gives_nothing(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "usage.json"
    path.write_bytes(body)
    assert usage_file.read(str(path)).usage is None


def test_a_usage_file_that_is_a_link_or_a_folder_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    shutil.copy(FIXTURES / "mock_ok_json" / "usage.json", real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert usage_file.read(str(real)).usage is not None
    assert usage_file.read(str(link)).usage is None
    assert usage_file.read(str(tmp_path)).usage is None
    usage_file.forget(str(link))  # a link is never removed: not ralph's file
    assert link.is_symlink()


def test_the_usage_file_sits_beside_the_prompt_in_the_logs() -> None:
    assert (
        usage_file.usage_path("/p/.ralph/f/logs/iteration-3.prompt.md")
        == "/p/.ralph/f/logs/iteration-3.copilot-usage.json"
    )
    assert usage_file.usage_path("/tmp/x.md") == "/tmp/x.md.copilot-usage.json"
    assert usage_file.usage_path("") is None


def test_the_monitor_reads_a_copilot_log() -> None:
    shown = []
    for line in (FIXTURES / "mock_tool_json" / "stdout").read_text().splitlines():
        shown += readable_lines(line) or []
    assert "⚙ Create: /tmp/cpx/caprun/mock_tool_json/work/work.txt" in shown
    assert "⚙ Shell: rm README.md" in shown
    assert any(line.startswith("✗ tool refused: Permission denied") for line in shown)
    assert "✗ command exited 2" in shown
    assert "Created work.txt. <promise>COMPLETE</promise>" in shown
    assert shown[-1] == "■ finished"
    assert readable_lines("plain text") is None
    assert readable_lines('{"type":"assistant","message":{}}') is None  # Claude Code's line: its own reader's
    assert readable_lines('{"type":"result","subtype":"success","result":"x"}') is None
    error = readable_lines((FIXTURES / "mock_weekly_limit_429_json" / "stdout").read_text().splitlines()[-3])
    assert error == ["✗ 429 You have exceeded your weekly rate limit. Please try again in 2 hours."]


def test_a_log_is_recognised_by_its_events() -> None:
    first = [json.loads(line) for line in (FIXTURES / "mock_ok_json" / "stdout").read_text().splitlines()[:3]]
    assert sniff(first)
    assert not sniff([{"type": "result", "subtype": "success"}, {"type": "assistant", "message": {}}])
    assert not sniff([{"type": "thread.started"}])


def test_tool_activity_names_what_each_tool_acts_on() -> None:
    assert tool_activity("bash", {"command": "pytest -q\n-x"}) == "Shell: pytest -q -x"
    assert tool_activity("edit", {"path": "/r/a.py", "old_str": "x"}) == "Edit: /r/a.py"
    assert (
        tool_activity("apply_patch", "*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n")
        == "Edit: a.py, b.py"
    )
    assert tool_activity("github-mcp-server-list_issues", None) == "github-mcp-server-list_issues"
    assert tool_activity(None, "x") == "tool"


def test_the_account_names_the_credential_without_the_secret() -> None:
    assert account({"COPILOT_GITHUB_TOKEN": "github_pat_x", "GH_TOKEN": "other", "HOME": "/h"}) == (
        "api-key:" + __import__("hashlib").sha256(b"github_pat_x").hexdigest()[:12]
    )
    assert account({"HOME": "/h"}) == "login:/h/.copilot"
    assert account({"HOME": "/h", "COPILOT_HOME": "/c"}) == "login:/c"
    byok = {"COPILOT_PROVIDER_BASE_URL": "http://user:pw@127.0.0.1:11434/v1?k=s", "GH_TOKEN": "gh"}
    assert account(byok) == "provider:127.0.0.1:11434/v1"  # no password, no query: nothing secret
    keyed = account({**byok, "COPILOT_PROVIDER_API_KEY": "sk-1"})
    assert keyed.startswith("api-key:") and "sk-1" not in keyed
