"""Usage windows in words (issue 34), for the loop's stop, `ralph status`, the monitor and `ralph serve` alike: a
window's name for people, a share as a percentage, and one line per window of the book."""

from __future__ import annotations

from datetime import datetime

from ralphloop.words.pace import local_when, parse_time, rough, seconds_between
from ralphloop.words.textsafe import strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LABELS = {
    "five_hour": "5-hour",
    "seven_day": "weekly",
    "seven_day_opus": "weekly Opus",
    "seven_day_sonnet": "weekly Sonnet",
}


def label(name: str) -> str:
    """A window's name for people: "5-hour", "weekly", else its own name."""
    return _LABELS.get(name, name.replace("_", " "))


def percent(share: float) -> str:
    """0.8 → "80%", 0.505 → "50.5%"."""
    return f"{share * 100:.1f}".removesuffix(".0") + "%"


def window_line(window: dict[str, Any], now: datetime) -> str:
    """`claude 5-hour: 55% used, past your 50% cap · resets 14:00:00 (in 1h58m) · read 12:02:10` (the agent text
    cleaned: an agent can write the book)."""
    agent = strip_terminal_controls(str(window.get("agent") or "the agent"))[:40]
    name = strip_terminal_controls(str(window.get("window") or ""))[:40]
    share, cap = window.get("utilization"), window.get("cap")
    used = f"{percent(share)} used" if isinstance(share, int | float) else "share unknown"
    if isinstance(cap, int | float) and isinstance(share, int | float):
        used += f", past your {percent(cap)} cap" if share >= cap else f" of your {percent(cap)} cap"
    said = f"{agent} {label(name)}: {used}"
    resets = parse_time(window.get("resetsAt"))
    left = seconds_between(now, resets)
    if resets is not None and (when := local_when(resets, now)):
        said += f" · resets {when}" + (f" (in {rough(left)})" if left is not None and left > 0 else "")
    read = parse_time(window.get("readAt"))
    if read is not None and (when := local_when(read, now)):
        said += f" · read {when}"
    return said
