"""StreamJsonParser on real Claude Code stream-json captures, fed in chunks that split lines anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude"
OK = (FIXTURES / "claude_mock_ok_streamjson.jsonl").read_bytes()
AUTH_401 = (FIXTURES / "claude_mock_auth_401_streamjson.jsonl").read_bytes()
RESUME_INVALID = (FIXTURES / "claude_resume_invalid.jsonl").read_bytes()

OK_TEXT = "Hello from mock. <promise>COMPLETE</promise>"
AUTH_TEXT = "Invalid API key · Fix external API key"


def outcome(exit_code: int | None = 0, **changes: object) -> ProcessOutcome:
    return ProcessOutcome(exit_code=exit_code, duration_s=1.25, **changes)  # type: ignore[arg-type]


def run(data: bytes, chunk_sizes: list[int], end: ProcessOutcome) -> AgentResult:
    parser = StreamJsonParser()
    position = 0
    sizes = iter(chunk_sizes)
    while position < len(data):
        size = next(sizes, len(data))
        parser.feed(data[position : position + size])
        position += size
    return parser.finish(end)


def test_fixtures_are_real_multi_line_captures() -> None:
    assert OK.count(b"\n") == 3
    assert AUTH_401.count(b"\n") == 4
    assert RESUME_INVALID.count(b"\n") == 1
    for data in (OK, AUTH_401, RESUME_INVALID):
        events = [json.loads(line) for line in data.splitlines()]
        assert events[-1]["type"] == "result"


ODD_SIZES = [[1], [7], [13], [97], [1000], [4096], [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9]]


@pytest.mark.parametrize("sizes", ODD_SIZES, ids=lambda sizes: "-".join(map(str, sizes[:3])))
def test_success_capture(sizes: list[int]) -> None:
    result = run(OK, sizes * 10_000, outcome(0))
    assert result.final_text == OK_TEXT
    assert not result.failed
    assert result.error is None
    assert result.exit_code == 0
    assert result.duration_s == 1.25


@pytest.mark.parametrize("sizes", ODD_SIZES, ids=lambda sizes: "-".join(map(str, sizes[:3])))
def test_auth_401_is_failed_although_subtype_is_success(sizes: list[int]) -> None:
    result = run(AUTH_401, sizes * 10_000, outcome(1))
    assert result.failed
    assert result.final_text == AUTH_TEXT
    assert result.error is not None
    assert AUTH_TEXT in result.error
    assert result.exit_code == 1


def test_auth_401_is_failed_even_with_exit_code_zero() -> None:
    result = run(AUTH_401, [61], outcome(0))
    assert result.failed
    assert result.error_kind is ErrorKind.AUTH
    assert result.error is not None
    assert result.error.startswith(f"Claude Code cannot authenticate ({AUTH_TEXT}). Fix: ")


@pytest.mark.parametrize("sizes", ODD_SIZES, ids=lambda sizes: "-".join(map(str, sizes[:3])))
def test_resume_invalid_reports_the_errors_list(sizes: list[int]) -> None:
    result = run(RESUME_INVALID, sizes * 10_000, outcome(1))
    assert result.failed
    assert result.final_text == ""
    assert result.error is not None
    assert "No conversation found with session ID: 00000000-0000-4000-8000-000000000000" in result.error


@given(st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=60))
def test_any_split_gives_the_same_result(sizes: list[int]) -> None:
    whole_ok = run(OK, [len(OK)], outcome(0))
    assert run(OK, sizes, outcome(0)) == whole_ok
    whole_401 = run(AUTH_401, [len(AUTH_401)], outcome(1))
    assert run(AUTH_401, sizes, outcome(1)) == whole_401
    assert whole_ok.final_text == OK_TEXT
    assert whole_401.failed


def test_session_id_is_read() -> None:
    parser = StreamJsonParser()
    parser.feed(OK)
    assert parser.session_id == "a937fc7c-6b7a-4611-8fdc-1452efe2f601"


def test_last_line_without_a_newline_is_still_read() -> None:
    result = run(OK.rstrip(b"\n"), [500], outcome(0))
    assert result.final_text == OK_TEXT
    assert not result.failed


def test_stream_cut_before_the_result_is_failed_with_the_last_text() -> None:
    lines = OK.splitlines(keepends=True)
    result = run(b"".join(lines[:-1]), [33], outcome(0))
    assert result.failed
    assert result.error == "Claude Code ended without a result event"
    # The assistant text is what the agent said, even without a result event.
    assert result.final_text == OK_TEXT


def test_non_json_lines_are_ignored() -> None:
    noisy = b"Warning: something on stdout\n\n{not json}\n" + OK + b"trailing garbage"
    result = run(noisy, [11], outcome(0))
    assert result.final_text == OK_TEXT
    assert not result.failed


def test_process_failure_is_reported_when_there_is_no_result() -> None:
    result = run(b"", [], outcome(None, start_error="claude: command not found"))
    assert result.failed
    assert result.error == "could not start the agent: claude: command not found"


def test_timeout_and_interrupt_are_carried_over() -> None:
    timed = run(OK, [100], outcome(-15, timed_out=True))
    assert timed.timed_out
    assert not timed.interrupted
    stopped = run(b"", [], outcome(-2, interrupted=True))
    assert stopped.interrupted
    assert stopped.failed
    assert stopped.error == "interrupted"


def test_a_giant_line_is_skipped_and_the_next_lines_are_read() -> None:
    from ralphloop.agents.json_lines import MAX_LINE_BYTES

    parser = StreamJsonParser()
    giant = b'{"type":"assistant","message":{"content":[{"type":"text","text":"' + b"x" * (MAX_LINE_BYTES + 10)
    for start in range(0, len(giant), 1 << 20):
        parser.feed(giant[start : start + (1 << 20)])
    parser.feed(b'"}]}}\n')
    parser.feed(OK)
    result = parser.finish(outcome(0))
    assert result.final_text == OK_TEXT
    assert not result.failed
