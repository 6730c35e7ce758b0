"""Codex's `exec --json` lines as a person reads them, and the item an agent is working on now.

The monitor shows a log's tail through `readable_lines`; the parser names the current item with `item_activity`.
Kept free of the backend's imports so the monitor loads only this.
"""

from __future__ import annotations

import re
from typing import Any

from ralphloop.agents.fields import mapping, text_lines
from ralphloop.agents.json_lines import log_event
from ralphloop.words.textsafe import one_line

# Codex runs each command as `/bin/bash -lc '<command>'`: show the command.
_SHELL = re.compile(r"^\S*\b(?:ba|z)?sh -lc '(?P<inner>.*)'$", re.DOTALL)


def item_activity(item: dict[str, Any]) -> str | None:
    """ "Shell: pytest -q", "Edit: src/app.py": what an item does, on one line; None for the agent's words."""
    kind = item.get("type")
    if kind == "command_execution":
        return f"Shell: {one_line(shell_command(item.get('command')), 100)}"
    if kind == "file_change":
        changes = item.get("changes")
        paths = (
            [str(change.get("path")) for change in changes if isinstance(change, dict)]
            if isinstance(changes, list)
            else []
        )
        return f"Edit: {one_line(', '.join(paths), 100)}" if paths else "Edit"
    if kind == "mcp_tool_call":
        return f"MCP: {item.get('server') or '?'}.{item.get('tool') or '?'}"
    if kind == "web_search":
        query = item.get("query")
        return f"Search: {one_line(query, 100)}" if isinstance(query, str) and query else "Search"
    if kind == "todo_list":
        todos = [todo for todo in item.get("items") or () if isinstance(todo, dict)]
        done = sum(1 for todo in todos if todo.get("completed"))
        return f"Plan: {done}/{len(todos)} done"
    if kind == "reasoning":
        return "Thinking"
    return None


def shell_command(command: Any) -> str:
    """The command a command_execution item ran, without Codex's `bash -lc '…'` wrapper."""
    text = command if isinstance(command, str) else " ".join(map(str, command)) if isinstance(command, list) else ""
    found = _SHELL.match(text)
    return found["inner"] if found else text


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `codex exec --json` output."""
    return any(str(event.get("type", "")).startswith(("thread.", "turn.", "item.")) for event in events)


def _is_codex(event: dict[str, Any]) -> bool:
    kind = event.get("type")
    return isinstance(kind, str) and (kind.startswith(("thread.", "turn.", "item.")) or kind == "error")


def readable_lines(line: str) -> list[str] | None:
    """What one `codex exec --json` line says, as zero or more lines of text; None when it is not one
    (plain output, a `[stderr]` line, another CLI's JSON), so the caller shows it as it is."""
    event = log_event(line, _is_codex)
    if event is None:
        return None
    kind = event["type"]
    if kind == "item.completed" and isinstance(event.get("item"), dict):
        return _item_lines(event["item"])
    if kind == "turn.completed":
        usage = mapping(event.get("usage"))
        numbers = [usage.get(key) for key in ("input_tokens", "output_tokens")]
        said = " · ".join(f"{n:,} {word}" for n, word in zip(numbers, ("in", "out"), strict=True) if isinstance(n, int))
        return [f"■ turn completed{': ' + said if said else ''}"]
    if kind == "turn.failed":
        error = mapping(event.get("error"))
        return [f"✗ turn failed: {one_line(str(error.get('message') or ''), 200)}"]
    if kind == "error":
        return [f"⚠ {one_line(str(event.get('message') or ''), 200)}"]
    return []


def _item_lines(item: dict[str, Any]) -> list[str]:
    kind = item.get("type")
    if kind == "agent_message" and isinstance(item.get("text"), str):
        return text_lines(item["text"])
    if kind == "error":
        return [f"⚠ {one_line(str(item.get('message') or ''), 200)}"]
    if kind == "reasoning":
        return []
    doing = item_activity(item)
    if doing is None:
        return []
    code = item.get("exit_code")
    failed = kind == "command_execution" and isinstance(code, int) and code != 0
    return [f"{'✗' if failed else '⚙'} {doing}{f' (exit {code})' if failed else ''}"]
