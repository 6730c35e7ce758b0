"""Copilot's `--output-format json` lines as a person reads them, and the tool an agent is running now.

The monitor shows a log's tail through `readable_lines`; the parser names the running tool with `tool_activity`.
Kept free of the backend's imports so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import first_given, labelled, mapping, text_lines
from ralphloop.agents.json_lines import log_event
from ralphloop.words.textsafe import one_line

# Copilot 1.0.102's built-in tools (its request's `tools`, per model family) and how ralph names what they do.
_VERBS = {
    "bash": "Shell",
    "powershell": "Shell",
    "read_bash": "Shell output",
    "write_bash": "Shell input",
    "stop_bash": "Shell stop",
    "create": "Create",
    "edit": "Edit",
    "str_replace_editor": "Edit",
    "apply_patch": "Edit",
    "view": "Read",
    "rg": "Search",
    "grep": "Search",
    "glob": "Find",
    "web_fetch": "Fetch",
    "task": "Agent",
    "skill": "Skill",
    "sql": "SQL",
}
# The argument that says what a tool acts on, in the order looked for.
_DETAIL_KEYS = ("command", "path", "pattern", "url", "description", "skill", "prompt")
# Event types only Copilot prints; `result` is Claude Code's too, and is told apart by its fields.
_PREFIXES = ("session.", "assistant.", "tool.", "model.call", "user.message", "subagent.", "permission.")


def tool_activity(name: Any, arguments: Any) -> str:
    """ "Shell: pytest -q", "Edit: /repo/src/app.py": a tool and what it is given, on one line."""
    tool = str(name or "tool")
    verb = _VERBS.get(tool, tool)
    detail = first_given(arguments, _DETAIL_KEYS)
    if tool == "apply_patch" and isinstance(arguments, str):
        detail = _patched_files(arguments)
    return labelled(verb, detail)


def _patched_files(patch: str) -> str:
    """The files an apply_patch text names ("*** Update File: a.py")."""
    names = [
        line.split(":", 1)[1].strip()
        for line in patch.splitlines()[:200]
        if line.startswith(("*** Update File:", "*** Add File:", "*** Delete File:"))
    ]
    return ", ".join(names)


def is_copilot_event(event: dict[str, Any]) -> bool:
    """Whether a decoded JSON line is one of Copilot's events (its `result` has `exitCode`, Claude's does not)."""
    kind = event.get("type")
    if not isinstance(kind, str):
        return False
    if kind == "result":
        return "exitCode" in event and "subtype" not in event
    return kind.startswith(_PREFIXES) or kind in ("abort", "hook.start", "hook.end")


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `copilot --output-format json` output."""
    return any(is_copilot_event(event) and event.get("type") != "result" for event in events)


def readable_lines(line: str) -> list[str] | None:
    """What one Copilot JSON line says, as zero or more lines of text; None when it is not one (plain output,
    a `[stderr]` line, another CLI's JSON), so the caller shows it as it is."""
    event = log_event(line, is_copilot_event)
    if event is None:
        return None
    kind = event["type"]
    data = mapping(event.get("data"))
    if kind == "assistant.message":
        content = data.get("content")
        return text_lines(content) if isinstance(content, str) else []
    if kind == "tool.execution_start":
        return [f"⚙ {tool_activity(data.get('toolName'), data.get('arguments'))}"]
    if kind == "tool.execution_complete":
        return _completed(data)
    if kind == "session.error":
        return [f"✗ {one_line(str(data.get('message') or ''), 200)}"]
    if kind == "session.warning":
        return [f"⚠ {one_line(str(data.get('message') or ''), 200)}"]
    if kind == "session.info" and data.get("infoType") == "model_retry":
        return [f"⚠ {one_line(str(data.get('message') or ''), 200)}"]
    if kind == "result":
        code = event.get("exitCode")
        return [f"■ {'finished' if code == 0 else f'failed (exit {code})'}"]
    return []


def _completed(data: dict[str, Any]) -> list[str]:
    """A finished tool call, shown only when it failed or was refused."""
    error = mapping(data.get("error"))
    if data.get("success") is False:
        word = "refused" if error.get("code") == "denied" else "failed"
        return [f"✗ tool {word}: {one_line(str(error.get('message') or ''), 160)}"]
    code = mapping(data.get("shellExecution")).get("exitCode")
    if isinstance(code, int) and code != 0:
        return [f"✗ command exited {code}"]
    return []
