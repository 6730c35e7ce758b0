"""A stand-in `gemini` executable that replays whole real Gemini CLI 0.61.0 runs (tests/fixtures/gemini/), one per
invocation, in a planned order (tests/agents/_replay.py); "work" plays e2e_tool_write."""

from __future__ import annotations

import os

from _replay import FIXTURES, play, this_run

name, _ = this_run("e2e_tool_write")
play(os.path.join(FIXTURES, "gemini", name))
