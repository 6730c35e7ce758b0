"""Parse the human durations users type: `15` (minutes), `90s`, `15m`, `1h`, `1h30m`."""

from __future__ import annotations

from ralphloop.words.patterns import lazy

_PART = lazy(r"(\d+(?:\.\d+)?)([smh])")
_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0}
# Past any wait, timeout or budget a run could mean; beyond it a time no longer fits a timestamp or a timer.
MAX_SECONDS = 366 * 24 * 3600.0


def parse_duration(text: str, *, bare_unit: str = "m") -> float:
    """Seconds for `text`; a bare number is in `bare_unit`. Raises ValueError when it is not a duration."""
    value = text.strip().lower()
    if not value:
        raise ValueError("empty duration")
    try:
        seconds = float(value) * _UNIT_SECONDS[bare_unit]
    except ValueError:
        seconds = _parse_parts(value)
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"duration must be positive: {text!r}")
    if seconds > MAX_SECONDS:
        raise ValueError(f"duration {text!r} is more than a year (366 days)")
    return seconds


def _parse_parts(value: str) -> float:
    position, total = 0, 0.0
    for match in _PART.finditer(value):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    if position != len(value) or position == 0:
        raise ValueError(f"not a duration: {value!r}")
    return total


def format_duration(seconds: float) -> str:
    """`90` → `1m30s`; short and exact enough for messages."""
    if seconds < 60:
        return f"{seconds:.1f}s" if seconds % 1 else f"{int(seconds)}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    text = f"{hours}h" if hours else ""
    text += f"{minutes}m" if minutes else ""
    text += f"{secs}s" if secs else ""
    return text
