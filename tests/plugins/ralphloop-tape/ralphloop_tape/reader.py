"""The tape's log as a person reads it (`ralph logs`, the monitor's log pane), and how a saved log is known."""

from __future__ import annotations

import json


def readable_lines(line: str) -> list[str] | None:
    """One line of a tape log -> the lines shown; None for a line that is not the tape's."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    if isinstance(event.get("say"), str):
        return [f"tape says: {event['say']}"]
    if isinstance(event.get("did"), str):
        return [f"tape did: {event['did']}"]
    if isinstance(event.get("done"), str):
        return [f"tape done: {event['done']}"]
    return None


def sniff(events: list[dict[str, object]]) -> bool:
    """Whether the first JSON events of a saved log are the tape's."""
    return bool(events) and all(any(key in event for key in ("say", "did", "done")) for event in events)
