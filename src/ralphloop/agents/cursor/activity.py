"""Cursor's stream-json lines as a person reads them, the tool an agent is using now, and how a saved log is told
apart from Claude Code's.

Cursor documents (cursor.com/docs/cli/reference/output-format) `system`/`init` {apiKeySource: env|flag|login, cwd,
session_id, model, permissionMode}, `user` and `assistant` {message {role, content [{type: text}]}}, `tool_call`
`started`/`completed` {call_id, tool_call {readToolCall|writeToolCall|… {args, result}} or {function {name,
arguments}}} and `result` {subtype, is_error, duration_ms, result, session_id, request_id}. `tool_call` is its own;
the other shapes look like Claude Code's, which marks every event of its own (`uuid`, `parent_tool_use_id`, an
assistant message's `id` and `model`, a result's `num_turns` and `total_cost_usd`, an init's `tools`). A line that
carries such a mark is left to Claude's reader. Kept free of the backend's imports so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import blocks, first_given, labelled, mapping, text_lines
from ralphloop.agents.json_lines import log_event
from ralphloop.words.textsafe import one_line

_CURSOR_KEY_SOURCES = frozenset({"env", "flag", "login"})
_CLAUDE_MARKS = frozenset({"uuid", "parent_tool_use_id", "num_turns", "total_cost_usd", "tools", "claude_code_version"})
_DETAIL_KEYS = ("command", "path", "pattern", "globPattern", "query", "url")


def is_cursor(event: dict[str, Any]) -> bool:
    """Whether an event is Cursor's: a `tool_call`, or a documented shape without any of Claude Code's marks."""
    kind = event.get("type")
    if kind == "tool_call":
        return True
    if kind not in ("system", "user", "assistant", "result") or not _CLAUDE_MARKS.isdisjoint(event):
        return False
    if kind == "system":
        return event.get("subtype") == "init" and event.get("apiKeySource") in _CURSOR_KEY_SOURCES
    message = mapping(event.get("message"))
    content = message.get("content")
    # Cursor's messages hold text only (its tools are tool_call events); Claude Code's carry tool_use and results.
    parts = content if isinstance(content, list) else []
    claude_parts = any(mapping(part).get("type") in ("tool_use", "tool_result", "thinking") for part in parts)
    return "id" not in message and "model" not in message and not claude_parts


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `cursor-agent --output-format stream-json` output: a tool call,
    or an init naming its key source as Cursor does (Claude Code writes "ANTHROPIC_API_KEY" or "none")."""
    return any(
        event.get("type") == "tool_call"
        or (event.get("type") == "system" and event.get("subtype") == "init" and is_cursor(event))
        for event in events
    )


def tool_name_and_args(tool_call: Any) -> tuple[str, dict[str, Any]]:
    """ "readToolCall" → ("read", its args); {"function": {"name", "arguments"}} → (name, {}); else ("tool", {})."""
    call = mapping(tool_call)
    function = mapping(call.get("function"))
    if function:
        return one_line(str(function.get("name") or "tool"), 60), {}
    for key, value in call.items():
        if isinstance(key, str) and key.endswith("ToolCall"):
            return one_line(key.removesuffix("ToolCall") or "tool", 60), mapping(mapping(value).get("args"))
    return "tool", {}


def tool_activity(tool_call: Any) -> str:
    """ "Write: src/app.py", "Shell: pytest -q": the tool and what it works on, on one line."""
    name, args = tool_name_and_args(tool_call)
    return labelled(name[:1].upper() + name[1:], first_given(args, _DETAIL_KEYS))


def tool_failure(tool_call: Any) -> str | None:
    """What a completed tool call's result says went wrong: its `error` (or `failure`, `rejected`), a shell
    command's non-zero exit code with its stderr; None when it succeeded or says nothing."""
    call = mapping(tool_call)
    for key, value in call.items():
        if not (isinstance(key, str) and key.endswith("ToolCall")):
            continue
        result = mapping(mapping(value).get("result"))
        for word in ("error", "failure", "rejected"):
            if word in result:
                found = result[word]
                detail = mapping(found).get("error") or mapping(found).get("message") or found
                return one_line(str(detail), 2000) or word
        done = mapping(result.get("success"))
        code = done.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            output = done.get("stderr") or done.get("stdout")
            return str(output)[-2000:] if isinstance(output, str) and output else f"exit {code}"
    return None


def readable_lines(line: str) -> list[str] | None:
    """What one Cursor stream-json line says, as zero or more lines of text; None when it is not Cursor's (plain
    output, a `[stderr]` line, Claude Code's or another CLI's JSON), so the caller shows it as it is."""
    event = log_event(line, is_cursor)
    if event is None:
        return None
    kind = event.get("type")
    if kind == "assistant":
        return [
            part
            for block in blocks(event.get("message"))
            if isinstance(block.get("text"), str)
            for part in text_lines(block["text"])
        ]
    if kind == "tool_call":
        if event.get("subtype") == "started":
            return [f"⚙ {tool_activity(event.get('tool_call'))}"]
        failure = tool_failure(event.get("tool_call"))
        return [f"✗ tool error: {one_line(failure, 200)}"] if failure else []
    if kind == "result":
        word = "error" if event.get("is_error") is True else str(event.get("subtype") or "done")
        return [f"■ result: {one_line(word, 40)}"]
    return []
