"""Amp, Cursor and Claude Code all print Claude-Code-shaped stream-json: a saved log, and each line the monitor
shows, must still be read by the backend that wrote it. Every real Claude Code capture in tests/fixtures/ stays
Claude's; the Amp and Cursor runs are theirs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ralphloop.agents import saved
from ralphloop.agents.amp import activity as amp
from ralphloop.agents.claude import activity as claude
from ralphloop.agents.cursor import activity as cursor
from ralphloop.agents.log_readers import log_reader

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CLAUDE_CAPTURES = sorted(
    {
        *FIXTURES.glob("claude/*.jsonl"),
        *FIXTURES.glob("claude/*.ndjson"),
        *FIXTURES.glob("claude/runs/*/stdout"),
        *FIXTURES.glob("analysis/claude_*.log"),
        *FIXTURES.glob("usage/claude*.jsonl"),
        *FIXTURES.glob("usage/claude*.json"),
        *FIXTURES.glob("captures/claude*"),
    }
)
CODEX_CAPTURES = sorted({*FIXTURES.glob("codex/*/stdout"), *FIXTURES.glob("usage/codex*.jsonl")})
AMP_RUNS = sorted(path for path in FIXTURES.glob("amp/built_*/stdout"))
CURSOR_RUNS = sorted(path for path in FIXTURES.glob("cursor/*/stdout") if path.stat().st_size)


def events(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def name(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def test_there_are_claude_captures_to_check() -> None:
    assert len(CLAUDE_CAPTURES) >= 30 and len(AMP_RUNS) >= 5 and len(CURSOR_RUNS) >= 2


@pytest.mark.parametrize("path", CLAUDE_CAPTURES, ids=name)
def test_every_real_claude_capture_is_still_claudes(path: Path) -> None:
    found = events(path)
    assert not amp.sniff(found) and not cursor.sniff(found)
    fmt = saved.detect(path.read_bytes()[: 64 * 1024])
    assert fmt in ("claude-stream-json", "claude-json", "text")
    if any(event.get("type") == "system" for event in found[:50]):
        assert fmt == "claude-stream-json"
    for line in path.read_text(errors="replace").splitlines():
        assert amp.readable_lines(line) is None and cursor.readable_lines(line) is None, line[:200]


@pytest.mark.parametrize("path", CODEX_CAPTURES, ids=name)
def test_codex_captures_are_not_claimed(path: Path) -> None:
    found = events(path)
    assert not amp.sniff(found) and not cursor.sniff(found)


@pytest.mark.parametrize("path", AMP_RUNS, ids=name)
def test_amp_runs_are_amps(path: Path) -> None:
    assert claude.sniff(events(path))  # Claude's sniff would take them: Amp's row comes first
    assert saved.detect(path.read_bytes()) == "amp-stream-json"
    assert not cursor.sniff(events(path))
    for line in path.read_text().splitlines():
        assert cursor.readable_lines(line) is None


@pytest.mark.parametrize("path", CURSOR_RUNS, ids=name)
def test_cursor_runs_are_cursors(path: Path) -> None:
    assert saved.detect(path.read_bytes()) == "cursor-stream-json"
    assert not amp.sniff(events(path))
    for line in path.read_text().splitlines():
        assert amp.readable_lines(line) is None


def test_a_command_agents_log_lines_go_to_the_reader_of_the_cli_that_wrote_them() -> None:
    read = log_reader("command")  # a command agent may run any CLI: every reader in turn
    amp_tool = (FIXTURES / "amp" / "built_tool_complete" / "stdout").read_text().splitlines()[1]
    assert read(amp_tool) == ["I'll create the work file for S-1.", "⚙ create_file: /work/project/work-S-1.txt"]
    cursor_call = (FIXTURES / "cursor" / "built_tool_complete" / "stdout").read_text().splitlines()[5]
    assert read(cursor_call) == ["⚙ Write: work-S-1.txt"]
    claude_line = next(
        line
        for line in (FIXTURES / "claude" / "claude_mock_ok_streamjson.jsonl").read_text().splitlines()
        if '"type":"result"' in line.replace(" ", "")
    )
    assert read(claude_line) == claude.readable_lines(claude_line)


@pytest.mark.parametrize(
    ("head", "fmt"),
    [
        (b'{"type": "system", "subtype": "init"}\n', "claude-stream-json"),
        (b'{"type": "system", "subtype": "init", "agent_mode": "high"}\n', "amp-stream-json"),
        (b'{"type": "assistant", "session_id": "T-019a8d2e-7c41-7b3a-9f0e-2d6c1b5a4e83"}\n', "amp-stream-json"),
        (b'{"type": "assistant", "session_id": "T-not-a-thread"}\n', "claude-stream-json"),
        (b'{"type": "tool_call", "subtype": "started"}\n', "cursor-stream-json"),
        (b'{"type": "system", "subtype": "init", "apiKeySource": "env"}\n', "cursor-stream-json"),
        (b'{"type": "system", "subtype": "init", "apiKeySource": "ANTHROPIC_API_KEY"}\n', "claude-stream-json"),
        (b'{"type": "system", "subtype": "init", "apiKeySource": "login", "uuid": "u"}\n', "claude-stream-json"),
    ],
)
def test_detect_by_each_clis_own_marks(head: bytes, fmt: str) -> None:
    assert saved.detect(head) == fmt
