"""A stand-in `cursor-agent` that replays whole cursor runs (tests/fixtures/cursor/: see its README for
which are captured and which are built from the CLI's source or documentation), one per invocation, in a planned
order (tests/agents/_replay.py); "work" plays built_tool_complete."""

from __future__ import annotations

import os

from _replay import FIXTURES, play, this_run

name, _ = this_run("built_tool_complete")
play(os.path.join(FIXTURES, "cursor", name))
