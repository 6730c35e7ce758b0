"""Gemini CLI's stream-json lines as a person reads them, and the tool an agent is using now.

`gemini -p --output-format stream-json` (0.61.0) prints one JSON object a line: `init` (session id, the model
asked for), `message` (the prompt echoed with role "user", then the model's text in `delta` pieces with role
"assistant"), `tool_use` (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`, `status`, `output`,
`error`), `error` (`severity`, `message`: what the CLI warns about along the way) and one `result` (`status`,
`error`, `stats`). The monitor shows a log's tail through `readable_lines`; the parser names the current tool
with `tool_activity`. Kept free of the backend's imports so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import first_given, mapping
from ralphloop.agents.json_lines import log_event
from ralphloop.words.textsafe import one_line

# Gemini's built-in tools by the word the monitor shows for them; another tool (an MCP server's) shows its name.
_LABELS = {
    "run_shell_command": "Shell",
    "write_file": "Write",
    "replace": "Edit",
    "read_file": "Read",
    "read_many_files": "Read",
    "list_directory": "List",
    "glob": "Glob",
    "grep_search": "Grep",
    "google_web_search": "Search",
    "web_fetch": "Fetch",
    "save_memory": "Memory",
    "invoke_agent": "Agent",
}
# The parameter that says what a tool works on, in the order they are looked for.
_DETAIL_KEYS = ("command", "file_path", "dir_path", "pattern", "query", "url", "prompt", "description")
_EVENT_KEYS = {"init": "session_id", "message": "role", "tool_use": "tool_name", "tool_result": "tool_id"}


def tool_activity(name: Any, parameters: Any) -> str:
    """ "Shell: pytest -q", "Edit: src/app.py": what a tool call does, on one line."""
    tool = one_line(str(name or "tool"), 60)
    given = parameters if isinstance(parameters, dict) else {}
    if tool == "write_todos":
        todos = [todo for todo in given.get("todos") or () if isinstance(todo, dict)]
        done = sum(1 for todo in todos if todo.get("status") == "completed")
        return f"Plan: {done}/{len(todos)} done"
    detail = tool_detail(given)
    label = _LABELS.get(tool, tool)
    return f"{label}: {detail}" if detail else label


def tool_detail(parameters: Any) -> str:
    """What a tool call works on (its command, file, pattern, ...), on one line; "" when it names nothing."""
    return one_line(first_given(parameters, _DETAIL_KEYS), 100)


def is_gemini_event(event: dict[str, Any]) -> bool:
    """Whether one JSON object is a Gemini stream-json event: its type with the field only that type carries
    (Claude Code's `result` has a `subtype`, Gemini's a `status`; Codex's `error` no `severity`)."""
    kind = event.get("type")
    if kind in _EVENT_KEYS:
        return _EVENT_KEYS[kind] in event
    if kind == "error":
        return "severity" in event
    return kind == "result" and "status" in event and "subtype" not in event


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `gemini --output-format stream-json` output."""
    return any(event.get("type") == "init" and "session_id" in event for event in events) or any(
        event.get("type") in ("message", "tool_use") and is_gemini_event(event) for event in events
    )


def readable_lines(line: str) -> list[str] | None:
    """What one Gemini stream-json line says, as zero or more lines of text; None when it is not one (plain
    output, a `[stderr]` line, another CLI's JSON), so the caller shows it as it is. The prompt's echo is not
    shown: it is ralph's own prompt, not the agent's words."""
    event = log_event(line, is_gemini_event)
    if event is None:
        return None
    kind = event["type"]
    if kind == "message":
        content = event.get("content")
        if event.get("role") != "assistant" or not isinstance(content, str):
            return []
        return [part.rstrip() for part in content.splitlines() if part.strip()]
    if kind == "tool_use":
        return [f"⚙ {tool_activity(event.get('tool_name'), event.get('parameters'))}"]
    if kind == "tool_result":
        if event.get("status") != "error":
            return []
        error = mapping(event.get("error"))
        return [f"✗ tool error: {one_line(str(error.get('message') or event.get('output') or ''), 200)}"]
    if kind == "error":
        return [f"⚠ {one_line(str(event.get('message') or ''), 200)}"]
    if kind == "result":
        return [_result_line(event)]
    return []


def _result_line(event: dict[str, Any]) -> str:
    if event.get("status") != "success":
        error = mapping(event.get("error"))
        return f"✗ result: {one_line(str(error.get('message') or event.get('status') or 'error'), 200)}"
    stats = mapping(event.get("stats"))
    given, total = stats.get("input_tokens"), stats.get("total_tokens")
    if isinstance(given, int) and isinstance(total, int) and not isinstance(given, bool):
        return f"■ result: success: {given:,} in · {max(0, total - given):,} out"
    return "■ result: success"
