"""Amp's stream-json lines as a person reads them, the tool an agent is using now, and how a saved log is told
apart from Claude Code's.

Amp prints "Claude Code-compatible" stream-json (`system` init, `assistant`, `user`, `result`), so its lines look
like Claude's; what only Amp writes is its thread id as the `session_id` of every event ("T-" and a UUID, where
Claude writes a bare UUID) and the init event's `agent_mode`. Both readers here claim a line only by that, so a
Claude log is never read as Amp's. Kept free of the backend's imports so the monitor loads only this.
"""

from __future__ import annotations

import re
from typing import Any

from ralphloop.agents.fields import block_text, blocks, first_given, labelled, message_lines
from ralphloop.agents.json_lines import log_event
from ralphloop.words.textsafe import one_line

_THREAD_ID = re.compile(r"T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# The input keys that say what a tool works on, in the order they are looked for: Bash's `cmd`, shell_command's
# `command`, the file tools' `path`, glob's `filePattern`, Grep's `pattern`, web tools' `query` and `url`.
_DETAIL_KEYS = ("cmd", "command", "path", "filePattern", "pattern", "query", "url", "description", "prompt")


def is_amp(event: dict[str, Any]) -> bool:
    """Whether an event is Amp's: its `session_id` is an Amp thread id."""
    session = event.get("session_id")
    return isinstance(session, str) and _THREAD_ID.fullmatch(session) is not None


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `amp -x --stream-json` output."""
    return any(
        is_amp(event) or (event.get("type") == "system" and event.get("subtype") == "init" and "agent_mode" in event)
        for event in events
    )


def tool_activity(block: dict[str, Any]) -> str:
    """ "Bash: pytest -q", "edit_file: /repo/src/app.py": the tool and what it is given, on one line."""
    return labelled(one_line(str(block.get("name") or "tool"), 60), first_given(block.get("input"), _DETAIL_KEYS))


def readable_lines(line: str) -> list[str] | None:
    """What one Amp stream-json line says, as zero or more lines of text; None when it is not Amp's (plain
    output, a `[stderr]` line, Claude Code's or another CLI's JSON), so the caller shows it as it is."""
    event = log_event(line, is_amp)
    if event is None:
        return None
    kind = event.get("type")
    if kind == "assistant":
        return message_lines(event.get("message"), tool_activity)
    if kind == "user":
        return [
            f"✗ tool error: {one_line(block_text(block.get('content')), 200)}"
            for block in blocks(event.get("message"))
            if block.get("type") == "tool_result" and block.get("is_error") is True
        ]
    if kind == "result":
        if event.get("is_error") is True:
            return [f"■ result: error: {one_line(str(event.get('error') or event.get('subtype') or ''), 200)}"]
        return [f"■ result: {one_line(str(event.get('subtype') or 'done'), 40)}"]
    return []
