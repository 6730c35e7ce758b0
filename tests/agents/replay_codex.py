"""A stand-in `codex` executable that replays whole real Codex 0.169.0 runs (tests/fixtures/codex/), one per
invocation, in a planned order (tests/agents/_replay.py); "work" plays mock_tool_json, and "limit-ahead" plays
mock_usage_limit_plus_json with its reset moved to five hours from now (written as Codex writes it, in UTC)."""

from __future__ import annotations

import os
import time

from _replay import FIXTURES, play, read, this_run

name, _ = this_run("mock_tool_json")
if name != "limit-ahead":
    play(os.path.join(FIXTURES, "codex", name))
folder = os.path.join(FIXTURES, "codex", "mock_usage_limit_plus_json")
when = time.gmtime(time.time() + 5 * 3600)
suffix = "th" if 10 <= when.tm_mday % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(when.tm_mday % 10, "th")
said = (
    f"{time.strftime('%b', when)} {when.tm_mday}{suffix}, {when.tm_year} {when.tm_hour % 12 or 12}:{when.tm_min:02d} "
)
said += "AM" if when.tm_hour < 12 else "PM"
play(folder, read(folder, "stdout").replace(b"Nov 21st, 2026 1:04 AM", said.encode()))
