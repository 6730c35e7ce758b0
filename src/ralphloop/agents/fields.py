"""The fields of a CLI's JSON events, read defensively: the output is not ours, so a value of the wrong type is as
good as absent. Shared by every backend's parser and by its monitor reader (activity.py), so it imports nothing
heavy: `ralph status` and the monitor load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ralphloop.words.textsafe import one_line


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    """`value` when it is a JSON string, else ""."""
    return value if isinstance(value, str) else ""


def whole(value: Any) -> int | None:
    """A JSON integer (never a bool), else None."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def count(value: Any) -> int | None:
    """A count: a JSON integer (never a bool) that is not negative, else None."""
    found = whole(value)
    return found if found is not None and found >= 0 else None


def block_text(content: Any) -> str:
    """The text of a message block's content: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def blocks(message: Any) -> list[dict[str, Any]]:
    """The content blocks of a message in Anthropic's shape (Claude Code's, Amp's, Cursor's): the JSON objects of
    its `content` list."""
    content = mapping(message).get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def text_lines(text: str) -> list[str]:
    """The agent's words as the monitor shows them: their lines that are not blank."""
    return [part for part in text.splitlines() if part.strip()]


def message_lines(message: Any, tool_activity: Callable[[dict[str, Any]], str]) -> list[str]:
    """An assistant message in Anthropic's shape as a person reads it: the lines of its text, and "⚙ " with what
    `tool_activity` says of each tool it uses."""
    shown: list[str] = []
    for block in blocks(message):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            shown += text_lines(block["text"])
        elif block.get("type") == "tool_use":
            shown.append(f"⚙ {tool_activity(block)}")
    return shown


def first_given(given: Any, keys: Iterable[str]) -> str:
    """What a tool is given to work on: the first of `keys` whose value is a string that is not blank, else ""."""
    found = mapping(given)
    return next((found[key] for key in keys if isinstance(found.get(key), str) and found[key].strip()), "")


def labelled(label: str, detail: str) -> str:
    """ "Bash: pytest -q": a tool's label and what it works on, on one line; the label alone without a detail."""
    return f"{label}: {one_line(detail, 100)}" if detail else label
