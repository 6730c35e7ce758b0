"""How prd.json's problems show what the file holds: the key most like a missing one, a value cut short, the kind
of a JSON value, the keys of another tool's file. Light (json and difflib only for a problem's words)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# what ralph reads, as the refusal of another tool's file shows it
PRD_SHAPE = '{"userStories": [{"id": ..., "title": ..., "passes": false}, ...]}'


def close_match(word: str, candidates: list[str], *, cutoff: float) -> str | None:
    """The candidate most like `word` (case aside), if any is alike enough."""
    if not candidates:
        return None  # the usual case (every key read): `ralph status` never imports difflib for it
    import difflib  # only when a key is missing and an unread one may be it

    lowered = {candidate.lower(): candidate for candidate in reversed(candidates)}
    found = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[found[0]] if found else None


def other_tool(value: dict[str, Any] | list[Any]) -> str:
    """What a file with no stories holds (its first keys), and what ralph would read instead."""
    if isinstance(value, dict):
        found = f"its keys: {quoted(list(value)[:6])}" if value else "an empty object"
    else:
        item = next((item for item in value if isinstance(item, dict)), None)
        found = f"its items' keys: {quoted(list(item)[:6])}" if item else "no objects in it"
    return f"{found}; ralph reads {PRD_SHAPE}"


def quoted(keys: list[str]) -> str:
    """Keys as JSON shows them: "a", "b"."""
    return ", ".join(f'"{key}"' for key in keys)


def kind_of(value: object) -> str:
    """What kind of JSON value it is, in words ("an object", "text", "null")."""
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    names = {dict: "an object", list: "an array", str: "text", int: "a number", float: "a number"}
    return names.get(type(value), "a value")


def shown(value: object) -> str:
    """A value as JSON, cut short."""
    import json  # a problem's words: `ralph status` reads a good file without json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def found_words(value: object) -> str:
    """The wrong value, when it is short enough to be worth quoting (`"true"` for true, say)."""
    if isinstance(value, str | int | float) or value is None:
        import json

        text = json.dumps(value, ensure_ascii=False)
        return f" (found {text})" if len(text) <= 40 else ""
    return f" (found {kind_of(value)})"
