"""ralphloop.agents.saved: a saved agent output (an iteration log or a capture) back into its final text."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralphloop.agents import saved
from ralphloop.agents.text import KEEP_BYTES

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "analysis"
PROMISE = "<promise>COMPLETE</promise>"


def read(name: str) -> bytes:
    return (CORPUS / name).read_bytes()


def lines(*values: object) -> bytes:
    return b"".join(json.dumps(value).encode() + b"\n" for value in values)


def stderr(*texts: str) -> bytes:
    return b"".join(b"[stderr] " + text.encode() + b"\n" for text in texts)


def codex_message(text: object, kind: str = "agent_message", event: str = "item.completed") -> dict[str, object]:
    return {"type": event, "item": {"id": "item_1", "type": kind, "text": text}}


# ------------------------------------------------------------------ detect


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("claude_stream_ok.log", "claude-stream-json"),
        ("claude_stream_tool.log", "claude-stream-json"),
        ("claude_stream_auth_401.log", "claude-stream-json"),
        ("claude_json_5h_limit.log", "claude-json"),
        ("claude_json_tool.log", "claude-json"),
        ("codex_json_ok.log", "codex-json"),
        ("codex_json_tool.log", "codex-json"),
        ("codex_text_ok.log", "text"),
        ("claude_text_5h_limit.log", "text"),
        ("gemini_json_ok.log", "text"),
        ("gemini_stream_ok.log", "gemini-stream-json"),
        ("claude_stream_tool_with_stderr.log", "claude-stream-json"),
        ("claude_json_tool_with_stderr.log", "claude-json"),
    ],
)
def test_detect_real_captures(name: str, fmt: str) -> None:
    assert saved.detect(read(name)[: 64 * 1024]) == fmt


@pytest.mark.parametrize(
    ("head", "fmt"),
    [
        (b"", "text"),
        (b"\n\n", "text"),
        (b"Hello, I fixed the bug.\n", "text"),
        (b"[stderr] warning\n[stderr] another\n", "text"),
        (lines({"type": "system", "subtype": "init"}), "claude-stream-json"),
        (stderr("npm warn") + lines({"type": "assistant", "message": {}}), "claude-stream-json"),
        (lines({"type": "rate_limit_event"}), "claude-stream-json"),
        (lines({"type": "thread.started"}), "codex-json"),
        (lines({"type": "turn.started"}, {"type": "item.completed", "item": {}}), "codex-json"),
        (lines({"type": "session.skills_loaded", "data": {}}, {"type": "user.message", "data": {}}), "copilot-json"),
        (lines({"type": "assistant.message", "data": {"content": "hi"}}), "copilot-json"),
        (lines({"type": "result", "result": "hi"}), "claude-json"),
        (stderr("warn") + lines({"type": "result", "result": "hi"}), "claude-json"),
        (b'{\n  "type": "result",\n  "result": "pretty"\n}\n', "claude-json"),
        (lines([1, 2], "str", 3), "text"),
        (b'{"not": "json"\n{"type": "system"}\n', "text"),  # sniffing stops at the first line that is not JSON
        (b'Intro line\n{"type": "system"}\n', "text"),
    ],
)
def test_detect(head: bytes, fmt: str) -> None:
    assert saved.detect(head) == fmt


def test_detect_reads_only_its_first_lines() -> None:
    head = b"".join(b"\n" for _ in range(60)) + lines({"type": "system"})
    assert saved.detect(head) == "text"


# ------------------------------------------------------------------ final_text: text


def test_text_drops_stderr_lines_and_keeps_the_rest_byte_exact() -> None:
    log = b"line one\r\n" + stderr(PROMISE, "---RALPH_STATUS---") + b"  [stderr] indented is stdout\nlast, no newline"
    assert saved.final_text([log], "text") == "line one\r\n  [stderr] indented is stdout\nlast, no newline"


def test_text_drops_a_stderr_line_split_across_chunks() -> None:
    log = b"out 1\n[std" + b"err] " + PROMISE.encode() + b"\nout 2\n"
    chunks = [log[i : i + 3] for i in range(0, len(log), 3)]
    assert saved.final_text(chunks, "text") == "out 1\nout 2\n"


def test_text_keeps_only_the_tail_like_the_loop() -> None:
    body = b"x" * 99 + b"\n"
    log = body * (3 * KEEP_BYTES // len(body)) + PROMISE.encode() + b"\n"
    text = saved.final_text([log[i : i + 65536] for i in range(0, len(log), 65536)], "text")
    assert len(text.encode()) == KEEP_BYTES
    assert text.endswith(PROMISE + "\n")


def test_text_decodes_junk_with_replacement() -> None:
    assert saved.final_text([b"ok \xff\xfe done\n"], "text") == "ok \ufffd\ufffd done\n"


@pytest.mark.parametrize("fmt", ["text", "auto", "something-else"])
def test_unknown_formats_are_read_as_text(fmt: str) -> None:
    assert saved.final_text([b"hello\n", stderr("noise"), b"bye"], fmt) == "hello\nbye"


# ------------------------------------------------------------------ final_text: claude


def test_claude_stream_json_takes_the_result_event() -> None:
    assert saved.final_text([read("claude_stream_ok.log")], "claude-stream-json") == f"Hello from mock. {PROMISE}"


def test_claude_stream_json_ignores_stderr_lines_even_if_they_look_like_events() -> None:
    log = (
        lines({"type": "system"})
        + b"[stderr] "
        + lines({"type": "result", "result": PROMISE})
        + lines({"type": "result", "result": "real result"})
        + b"[stderr] "
        + lines({"type": "result", "result": "late " + PROMISE})
    )
    assert saved.final_text([log], "claude-stream-json") == "real result"


def test_claude_stream_json_without_a_result_uses_the_last_assistant_text() -> None:
    log = lines(
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "first"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use"}, {"type": "text", "text": "second"}]}},
    )
    assert saved.final_text([log], "claude-stream-json") == "second"


def test_claude_json_reads_the_result_among_stderr_lines() -> None:
    log = stderr("warn") + lines({"type": "result", "result": "the answer"}) + stderr(PROMISE)
    assert saved.final_text([log], "claude-json") == "the answer"
    fake = stderr(json.dumps({"type": "result", "result": PROMISE}))
    assert saved.final_text([fake + lines({"type": "result", "result": "the answer"})], "claude-json") == "the answer"


def test_claude_json_pretty_printed() -> None:
    log = json.dumps({"type": "result", "result": f"pretty {PROMISE}"}, indent=2).encode()
    chunks = [log[i : i + 5] for i in range(0, len(log), 5)]
    assert saved.final_text(chunks, "claude-json") == f"pretty {PROMISE}"


@pytest.mark.parametrize(
    "log",
    [
        b"",
        b"not json",
        lines({"type": "result"}),
        lines({"type": "result", "result": None}),
        lines(["result"]),
        b'{"type": "result", "result": "cut',
    ],
)
def test_claude_json_without_a_result_string_is_empty(log: bytes) -> None:
    assert saved.final_text([log], "claude-json") == ""


# ------------------------------------------------------------------ final_text: codex


def test_codex_json_takes_the_last_agent_message() -> None:
    log = lines(
        {"type": "thread.started"},
        codex_message("first"),
        codex_message("started, not completed", event="item.started"),
        codex_message("a command", kind="command_execution"),
        {"type": "item.completed", "item": {"type": "error", "message": PROMISE}},
        codex_message("last"),
        codex_message(["not", "text"]),
        {"type": "turn.completed"},
    )
    assert saved.final_text([log], "codex-json") == "last"


def test_codex_json_skips_stderr_and_broken_lines() -> None:
    log = stderr(PROMISE) + b"{broken\n" + lines(codex_message("the reply")) + b"[1, 2]\n" + stderr("done")
    assert saved.final_text([log[i : i + 7] for i in range(0, len(log), 7)], "codex-json") == "the reply"


def test_codex_json_without_a_message_is_empty() -> None:
    assert saved.final_text([lines({"type": "thread.started"}, {"type": "turn.failed"})], "codex-json") == ""


def test_codex_tool_capture_ignores_the_command_output() -> None:
    assert saved.final_text([read("codex_json_tool.log")], "codex-json") == f"Hello from mock. {PROMISE}"


# ------------------------------------------------------------------ chunking never matters


CAPTURES = sorted(path.name for path in CORPUS.glob("*.log"))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(CAPTURES), cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_final_text_does_not_depend_on_how_the_log_is_chunked(name: str, cuts: list[int]) -> None:
    data = read(name)
    fmt = saved.detect(data)
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    chunks = [data[start:end] for start, end in itertools.pairwise(points)]
    assert saved.final_text(chunks, fmt) == saved.final_text([data], fmt)


def test_gemini_stream_json_is_read_by_its_backends_parser() -> None:
    """The assistant's text only: the echo of the prompt (`"role":"user"`) is not the agent's words."""
    data = read("gemini_stream_ok.log")
    assert saved.detect(data) == "gemini-stream-json"
    assert saved.final_text([data], "gemini-stream-json") == f"Hello from mock. {PROMISE}"
