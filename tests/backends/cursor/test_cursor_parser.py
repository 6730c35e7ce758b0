"""The cursor backend's parser over stream-json built from Cursor's documentation, with stderr texts of real runs
from public bug reports (tests/fixtures/cursor/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.agents.cursor.activity import readable_lines
from ralphloop.agents.cursor.parser import CursorStreamParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome

FIXTURES = Path(__file__).parents[2] / "fixtures" / "cursor"
SESSION = "3f6c2b1e-9a8d-4c7b-b6e5-0d1c2b3a4f5e"
PROMISE = "<promise>COMPLETE</promise>"


def parse(name: str, *, model: str | None = None, chunk: int = 0) -> AgentResult:
    folder = FIXTURES / name
    code = int((folder / "rc").read_text())
    return feed((folder / "stdout").read_bytes(), code, (folder / "stderr").read_text(), model=model, chunk=chunk)


def feed(
    stdout: bytes, code: int | None = 0, stderr: str = "", *, model: str | None = None, chunk: int = 0, **flags: bool
) -> AgentResult:
    parser = CursorStreamParser(model=model)
    for piece in [stdout[i : i + chunk] for i in range(0, len(stdout), chunk)] if chunk else [stdout]:
        parser.feed(piece)
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=stderr, **flags))


def lines(*events: object) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def said(text: str) -> dict[str, object]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def result(text: str, **extra: object) -> dict[str, object]:
    return {"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": SESSION, **extra}


def call(subtype: str, tool: dict[str, object], ident: str = "c1") -> dict[str, object]:
    return {"type": "tool_call", "subtype": subtype, "call_id": ident, "tool_call": tool}


@pytest.mark.parametrize("chunk", [0, 1, 29])
def test_a_finished_run_gives_the_result_text_and_no_tokens(chunk: int) -> None:
    done = parse("built_tool_complete", chunk=chunk)
    assert not done.failed and done.error is None and done.error_kind is None
    assert done.final_text.endswith(PROMISE)
    assert done.final_text.startswith("I'll read the prompt file")  # all the assistant text, as Cursor documents
    assert (done.tokens, done.usage, done.cost_usd) == (None, None, None)  # Cursor reports none: none recorded
    assert done.session_id == SESSION


def test_the_model_is_the_one_asked_for_else_the_display_name() -> None:
    assert parse("built_tool_complete").model == "Claude 4 Sonnet"
    assert parse("built_tool_complete", model="sonnet-4").model == "sonnet-4"


def test_the_tool_in_use_shows_while_it_runs() -> None:
    parser = CursorStreamParser()
    seen = []
    for line in (FIXTURES / "built_tool_complete" / "stdout").read_bytes().splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert seen[3] == "Read: /work/project/.ralph/feat/logs/iteration-1.prompt.md"
    assert seen[5] == "Write: work-S-1.txt"
    assert seen[4] is None and seen[6] is None and seen[-1] is None
    function = call("started", {"function": {"name": "grep_search", "arguments": '{"q": "x"}'}})
    parser.feed(lines(function))
    assert parser.activity() == "Grep_search"


def test_failed_tool_calls_are_tool_errors() -> None:
    shell = {
        "shellToolCall": {"args": {"command": "pytest -q"}, "result": {"success": {"exitCode": 1, "stderr": "E1"}}}
    }
    write = {"writeToolCall": {"args": {"path": "a"}, "result": {"error": {"error": "permission denied"}}}}
    done = feed(lines(call("completed", shell), call("completed", write, "c2"), result("x")))
    assert done.tool_errors == ("E1", "permission denied")


def test_the_monthly_usage_limit_stops_at_once_and_is_not_waited_for() -> None:
    run = parse("report_usage_limit")
    assert run.failed and run.error_kind is ErrorKind.BILLING and run.usage_limit is None
    assert "11/17/2025" in (run.error or "") and "not worth waiting for" in (run.error or "")


def test_not_logged_in_is_auth() -> None:
    run = parse("report_auth_required")
    assert run.failed and run.error_kind is ErrorKind.AUTH and "cursor-agent login" in (run.error or "")


def test_the_agents_words_are_never_the_clis_error() -> None:
    quoted = "I made 'You've hit your usage limit' and 'Authentication required' friendlier. " + PROMISE
    run = feed(lines(said(quoted), result(quoted)))
    assert not run.failed and run.error_kind is None and run.final_text == quoted
    crashed = feed(lines(said("Authentication required errors now retry.")), 1, "")
    assert crashed.failed and crashed.error_kind is None and crashed.error == "exit code 1"


def test_exit_0_without_a_result_and_no_output_at_all_are_failures() -> None:
    assert feed(lines(said("half way")), 0).error == "cursor-agent ended without a result event"
    assert feed(b"", 0).failed and feed(b"", 0).error_kind is None
    assert feed(b"", 1, "Error: Authentication required.\n").error_kind is ErrorKind.AUTH


def test_an_error_result_is_a_failure_even_with_exit_0() -> None:
    run = feed(lines({"type": "result", "subtype": "error", "is_error": True, "result": "boom"}), 0)
    assert run.failed and run.is_error and run.error == "Cursor reported an error: boom"


def test_broken_lines_are_skipped_and_a_20_mb_line_is_dropped() -> None:
    huge = b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "' + b"x" * (20 << 20) + b'"}]}}\n'
    stream = b'{"type": "tool_ca\n\xff\xfe\n' + huge + lines(result("fine"))
    run = feed(stream, chunk=1 << 20)
    assert not run.failed and run.final_text == "fine"


def test_a_run_ralph_stopped_has_no_error_kind() -> None:
    assert feed(b"", -15, "Error: You've hit your usage limit", interrupted=True).error_kind is None


def test_readable_lines_read_cursors_events() -> None:
    out = [readable_lines(line) for line in (FIXTURES / "built_tool_complete" / "stdout").read_text().splitlines()]
    assert out[0] == [] and out[1] == []  # init, the prompt's echo
    assert out[2] == ["I'll read the prompt file, then write the work file for S-1."]
    assert out[5] == ["⚙ Write: work-S-1.txt"] and out[6] == []
    assert out[-1] == ["■ result: success"]
    failed = call("completed", {"writeToolCall": {"args": {}, "result": {"rejected": {"reason": "no"}}}})
    assert readable_lines(json.dumps(failed)) == ["✗ tool error: {'reason': 'no'}"]
    assert readable_lines("plain") is None
