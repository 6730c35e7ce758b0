"""A stand-in `claude` executable that replays whole real Claude Code runs (tests/fixtures/claude/runs/), one per
invocation, in a planned order (tests/agents/_replay.py); "work" plays claude_mock_tool_streamjson, and
"limit-ahead" plays the 5-hour limit claude_mock_oauth_unified_rejected_streamjson with its reset (every
`"resetsAt"`) moved to five hours from now, as a limit met today would say."""

from __future__ import annotations

import os
import re
import time

from _replay import FIXTURES, play, read, this_run

RUNS = os.path.join(FIXTURES, "claude", "runs")

name, _ = this_run("claude_mock_tool_streamjson")
if name != "limit-ahead":
    play(os.path.join(RUNS, name))
folder = os.path.join(RUNS, "claude_mock_oauth_unified_rejected_streamjson")
ahead = b'"resetsAt":%d' % (int(time.time()) + 5 * 3600)
play(folder, re.sub(rb'"resetsAt":\d+', ahead, read(folder, "stdout")))
