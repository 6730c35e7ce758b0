"""The text of the loop's live line (seed 004's "Real-Time Timer" and "Retry Countdown"), and the
small thread that redraws it a few times a second.

The text comes from pure functions of (frame, seconds, what to show, width), so it is tested
without a terminal or a clock; the thread only says when to draw.
"""

from __future__ import annotations

import math
import threading
import time
import unicodedata
from collections.abc import Callable

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"  # seed 004: the 10-frame braille pattern
INTERVAL_S = 0.125  # how often the thread redraws: the frame turns 8 times a second
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"


def clock(seconds: float) -> str:
    """MM:SS, or HH:MM:SS past an hour (whole seconds, rounded down)."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def running_frame(index: int, elapsed_s: float, activity: str | None, width: int) -> str:
    """`⠹ Running… 02:15 · ⚙ Bash: pytest -q`, cut to fit `width` columns without wrapping."""
    text = f"{FRAMES[index % len(FRAMES)]} Running… {clock(elapsed_s)}"
    if activity:
        text += f" · ⚙ {activity}"
    return fit(text, width)


def waiting_frame(index: int, seconds_left: float, message: str, until: str, width: int) -> str:
    """`⠋ Waiting… 05:00 remaining · rate limit reached (until 14:05:00)`, cut to fit `width` columns."""
    left = clock(math.ceil(max(0.0, seconds_left)))
    return fit(f"{FRAMES[index % len(FRAMES)]} Waiting… {left} remaining · {message} (until {until})", width)


def columns(char: str) -> int:
    """How many terminal columns one character takes: 0 (combining), 2 (wide) or 1."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def fit(text: str, width: int) -> str:
    """`text` in at most `width - 1` columns (writing the last column makes some terminals wrap),
    ending in "…" when it was cut."""
    room = max(1, width - 1)
    if sum(columns(char) for char in text) <= room:
        return text
    kept: list[str] = []
    used = 0
    for char in text:
        size = columns(char)
        if used + size > room - 1:  # keep one column for the ellipsis
            break
        kept.append(char)
        used += size
    return "".join(kept) + "…"


class Ticker:
    """A daemon thread that calls `tick` every `interval` seconds until `tick` returns False."""

    def __init__(self, tick: Callable[[], bool], interval: float = INTERVAL_S) -> None:
        self._tick = tick
        self._interval = interval
        self.thread = threading.Thread(target=self._run, name="ralph-spinner", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self._interval)
            if not self._tick():
                return
