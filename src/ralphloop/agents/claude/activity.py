"""Claude Code's stream-json lines as a person reads them: the agent's words, the tools it uses, the result.

The monitor shows a log's tail through `readable_lines`, and the parser names the agent's current tool with
`tool_activity`; kept free of the backend's imports (settings, usage limits) so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import block_text, blocks, first_given, labelled, message_lines
from ralphloop.agents.json_lines import log_event, typed
from ralphloop.words.textsafe import one_line


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
    event = log_event(line, typed)
    if event is None:
        return None
    kind = event["type"]
    if kind == "assistant":
        return message_lines(event.get("message"), tool_activity)
    if kind == "user":
        errors = [
            block
            for block in blocks(event.get("message"))
            if block.get("type") == "tool_result" and block.get("is_error")
        ]
        return [f"✗ tool error: {one_line(block_text(block.get('content')), 200)}" for block in errors]
    if kind == "result":
        cost = event.get("total_cost_usd")
        money = f" · ${cost:.2f}" if isinstance(cost, int | float) and not isinstance(cost, bool) else ""
        if event.get("is_error"):  # the CLI's own message (a failed login, a limit): what `ralph logs` is read for
            said = one_line(str(event.get("result") or event.get("subtype") or ""), 200)
            return [f"■ result: error{f': {said}' if said else ''}{money}"]
        return [f"■ result: {event.get('subtype') or 'done'}{money}"]
    if kind == "system" and event.get("subtype") == "api_retry":
        return [f"⚠ API retry {event.get('attempt')}/{event.get('max_retries')}"]
    return []
