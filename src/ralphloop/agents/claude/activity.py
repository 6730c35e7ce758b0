"""Claude Code's stream-json lines as a person reads them: the agent's words, the tools it uses, the result.

The monitor shows a log's tail through `readable_lines`, and the parser names the agent's current tool with
`tool_activity`; kept free of the backend's imports (settings, usage limits) so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import block_text, first_given, labelled, mapping
from ralphloop.agents.json_lines import json_object
from ralphloop.textsafe import one_line


def tool_activity(block: dict[str, Any]) -> str:
    """ "Bash: pytest -q", "Write: src/app.py": the tool and what it is given, on one line."""
    return labelled(str(block.get("name") or "tool"), first_given(block.get("input"), _DETAIL_KEYS))


# The input keys that say what a tool works on, in the order they are looked for.
_DETAIL_KEYS = ("command", "file_path", "path", "pattern", "url", "description", "prompt")


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `claude -p --output-format stream-json` output."""
    return any(event.get("type") in _STREAM_EVENTS for event in events)


_STREAM_EVENTS = frozenset({"system", "assistant", "user", "stream_event", "rate_limit_event"})


def readable_lines(line: str) -> list[str] | None:
    """What one stream-json line says, as zero or more lines of text; None when it is not stream-json
    (plain output, a `[stderr]` line), so the caller shows it as it is."""
    if not line.startswith("{"):
        return None
    event = json_object(line)
    if event is None or not isinstance(event.get("type"), str):
        return None
    kind = event["type"]
    if kind == "assistant":
        shown = []
        content = mapping(event.get("message")).get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                shown += [part for part in block["text"].splitlines() if part.strip()]
            elif block.get("type") == "tool_use":
                shown.append(f"⚙ {tool_activity(block)}")
        return shown
    if kind == "user":
        content = mapping(event.get("message")).get("content")
        errors = [
            block
            for block in (content if isinstance(content, list) else ())
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")
        ]
        return [f"✗ tool error: {one_line(block_text(block.get('content')), 200)}" for block in errors]
    if kind == "result":
        cost = event.get("total_cost_usd")
        money = f" · ${cost:.2f}" if isinstance(cost, int | float) and not isinstance(cost, bool) else ""
        word = "error" if event.get("is_error") else str(event.get("subtype") or "done")
        return [f"■ result: {word}{money}"]
    if kind == "system" and event.get("subtype") == "api_retry":
        return [f"⚠ API retry {event.get('attempt')}/{event.get('max_retries')}"]
    return []
