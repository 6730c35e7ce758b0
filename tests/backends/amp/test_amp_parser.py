"""The amp backend's parser over Amp 0.0.1790142911 output (tests/fixtures/amp/): the real CLI's failures before a
thread starts, and stream-json runs built from its source."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents.amp.activity import readable_lines
from ralphloop.agents.amp.parser import AmpStreamParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "amp"
NOW = datetime(2026, 11, 27, 14, 37, 12, tzinfo=UTC)
THREAD = "T-019a8d2e-7c41-7b3a-9f0e-2d6c1b5a4e83"
PROMISE = "<promise>COMPLETE</promise>"


def parse(name: str, *, chunk: int = 0) -> AgentResult:
    folder = FIXTURES / name
    code = int((folder / "rc").read_text())
    return feed((folder / "stdout").read_bytes(), code, (folder / "stderr").read_text(), chunk=chunk)


def feed(stdout: bytes, code: int | None = 0, stderr: str = "", *, chunk: int = 0, **outcome: bool) -> AgentResult:
    parser = AmpStreamParser(NOW)
    for piece in [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]:
        parser.feed(piece)
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=stderr, **outcome))


def lines(*events: object) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def init(mode: str = "medium") -> dict[str, object]:
    return {"type": "system", "subtype": "init", "cwd": "/p", "session_id": THREAD, "tools": [], "agent_mode": mode}


def said(text: str, stop: str = "end_turn") -> dict[str, object]:
    message = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": stop}
    return {"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": THREAD}


def result(text: str = "done") -> dict[str, object]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": text,
        "session_id": THREAD,
    }


def failed(error: str) -> dict[str, object]:
    return {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "error": error,
        "session_id": THREAD,
    }


def tool_result(content: str, *, is_error: bool = False, ident: str = "toolu_1") -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": ident, "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [block]}, "session_id": THREAD}


# ------------------------------------------------------------------ a finished run


@pytest.mark.parametrize("chunk", [0, 1, 13])
def test_a_finished_run_gives_the_result_text_the_summed_tokens_and_the_mode(chunk: int) -> None:
    done = parse("built_tool_complete", chunk=chunk)
    assert not done.failed and done.error is None and done.error_kind is None
    assert done.final_text.endswith(PROMISE)
    # Three messages, each its own inference: their usage adds up.
    assert done.usage == TokenUsage(
        input_tokens=1265, output_tokens=155, cache_creation_tokens=3350, cache_read_tokens=8600
    )
    assert done.tokens == 1265 + 155 + 3350 + 8600
    assert done.cost_usd is None  # Amp bills in credits, which the stream does not carry: never a guess
    assert (done.model, done.session_id, done.num_turns, done.stop_reason) == ("medium", THREAD, 3, "end_turn")


def test_the_tool_in_use_shows_while_it_runs_and_clears_when_it_answers() -> None:
    parser = AmpStreamParser(NOW)
    seen = []
    for line in (FIXTURES / "built_tool_complete" / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert seen == [
        None,
        "create_file: /work/project/work-S-1.txt",
        None,
        "Bash: git status --short",
        None,
        None,
        None,
    ]


def test_a_shell_command_failing_is_a_tool_error_though_amp_calls_it_done() -> None:
    run = lines(
        init(), tool_result(json.dumps({"output": "FAILED test_a.py::test_x\n", "exitCode": 1})), said("x"), result()
    )
    assert feed(run).tool_errors == ("FAILED test_a.py::test_x\n",)
    cancelled = lines(init(), tool_result("Tool execution cancelled: timeout", is_error=True), result())
    assert feed(cancelled).tool_errors == ("Tool execution cancelled: timeout",)
    assert feed(lines(init(), tool_result(json.dumps({"output": "ok", "exitCode": 0})), result())).tool_errors == ()


# ------------------------------------------------------------------ failures: exit 0 with an error result


@pytest.mark.parametrize(
    ("name", "kind", "fix"),
    [
        ("built_result_out_of_credits", ErrorKind.BILLING, "ampcode.com/pay"),
        ("built_result_no_usage_monthly", ErrorKind.BILLING, "not worth waiting for"),
        ("built_result_overloaded", ErrorKind.OVERLOADED, "Try again in a few seconds"),
        ("built_result_unauthorized", ErrorKind.AUTH, "amp login"),
    ],
)
def test_a_failed_thread_exits_0_and_its_result_decides(name: str, kind: ErrorKind, fix: str) -> None:
    run = parse(name)
    assert run.exit_code == 0 and run.failed and run.is_error
    assert run.error_kind is kind and fix in (run.error or "")
    assert run.usage_limit is None


def test_the_free_tier_limit_waits_for_the_next_hour() -> None:
    run = parse("built_result_free_limit")
    assert run.failed and run.error_kind is ErrorKind.USAGE_LIMIT
    assert run.usage_limit is not None
    assert run.usage_limit.resets_at == datetime(2026, 11, 27, 15, 0, tzinfo=UTC)
    assert (run.usage_limit.vendor, run.usage_limit.kind) == ("amp", "hourly")


def test_a_command_amp_wants_approved_is_a_denial_with_the_fix_not_a_service_error() -> None:
    run = parse("built_result_approval")
    assert run.failed and run.error_kind is None
    assert run.permission_denials == ("Bash",)
    assert "--permissions all" in (run.error or "") and "amp.permissions" in (run.error or "")


def test_a_tool_refused_on_stderr_with_exit_1_is_a_denial_too() -> None:
    stderr = "Error: The Bash tool tried to run a command that isn't allowlisted. Rerun with --dangerously-allow-all"
    run = feed(lines(init()), 1, stderr + "\n")
    assert run.failed and run.error_kind is None and run.permission_denials == ("Bash",)
    assert "--permissions all" in (run.error or "")


# ------------------------------------------------------------------ failures before a thread: the real CLI


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("auth_401", ErrorKind.AUTH),
        ("forbidden_403", ErrorKind.AUTH),
        ("no_login", ErrorKind.AUTH),
        ("payment_402", ErrorKind.BILLING),
        ("rate_429", ErrorKind.RATE_LIMITED),
        ("server_500", ErrorKind.OVERLOADED),
        ("unreachable", ErrorKind.NETWORK),
        ("unknown_option", ErrorKind.REFUSED),
        ("empty_stdin", ErrorKind.REFUSED),
    ],
)
def test_the_real_clis_failures_before_a_thread_come_from_its_stderr(name: str, kind: ErrorKind) -> None:
    run = parse(name)
    assert run.exit_code == 1 and run.failed and not run.is_error
    assert run.error_kind is kind, run.error
    assert run.session_id is None and run.final_text == ""


# ------------------------------------------------------------------ the agent's words are never the CLI's


def test_error_and_limit_words_in_the_agents_own_text_are_not_errors() -> None:
    quoted = "I handled 'Out of Credits' and \"You've reached your free usage limit\" in errors.py. " + PROMISE
    run = feed(lines(init(), said(quoted), result(quoted)))
    assert not run.failed and run.error_kind is None and run.usage_limit is None
    assert run.final_text == quoted


def test_a_crash_after_the_agent_quoted_an_error_is_an_ordinary_failure() -> None:
    run = feed(lines(init(), said("Invalid or missing API key handling added.")), 1, "")
    assert run.failed and run.error_kind is None and run.error == "exit code 1"
    assert run.final_text == "Invalid or missing API key handling added."  # no result: its last words


# ------------------------------------------------------------------ broken and hostile streams


def test_no_output_at_all_is_a_failure_whatever_the_exit_code() -> None:
    assert feed(b"", 0).error == "Amp ended without a result event"
    assert feed(b"", 0).error_kind is None
    assert feed(b"", 1).error == "exit code 1"


def test_truncated_invalid_and_non_utf8_lines_are_skipped() -> None:
    run = lines(init()) + b'{"type": "assistant", "mess\n' + b"\xff\xfe not json\n[1, 2]\n" + lines(result("fine"))
    done = feed(run)
    assert not done.failed and done.final_text == "fine" and done.model == "medium"
    assert feed(run[:-5]).error == "Amp ended without a result event"  # the result line cut off


def test_a_20_mb_line_is_dropped_and_the_stream_goes_on() -> None:
    huge = b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "' + b"x" * (20 << 20) + b'"}]}}\n'
    done = feed(lines(init()) + huge + lines(result("after")), chunk=1 << 20)
    assert not done.failed and done.final_text == "after"


def test_a_huge_tool_output_is_skimmed_not_parsed() -> None:
    parser = AmpStreamParser(NOW)
    parser.feed(
        lines(init(), {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Read"}]}})
    )
    assert parser.activity() == "Read"
    parser.feed(lines(tool_result("y" * (2 << 20), ident="t")))
    assert parser.activity() is None


def test_a_run_ralph_stopped_has_no_error_kind() -> None:
    stopped = lines(init(), failed("Unauthorized Invalid API key"))
    assert feed(stopped, -15, interrupted=True).error_kind is None
    assert feed(stopped, -9, timed_out=True).error_kind is None


# ------------------------------------------------------------------ the monitor's lines


def test_readable_lines_read_amps_events_and_leave_others_alone() -> None:
    out = [readable_lines(line) for line in (FIXTURES / "built_tool_complete" / "stdout").read_text().splitlines()]
    assert out[1] == ["I'll create the work file for S-1.", "⚙ create_file: /work/project/work-S-1.txt"]
    assert out[3] == ["⚙ Bash: git status --short"]
    assert out[-1] == ["■ result: success"]
    assert readable_lines(json.dumps(failed("Out of Credits Add credits to keep using Amp."))) == [
        "■ result: error: Out of Credits Add credits to keep using Amp."
    ]
    assert readable_lines(json.dumps(tool_result("boom", is_error=True))) == ["✗ tool error: boom"]
    assert readable_lines("plain text") is None
    assert (
        readable_lines(json.dumps({"type": "assistant", "session_id": "0b3c0b0c-1111-2222-3333-444455556666"})) is None
    )
