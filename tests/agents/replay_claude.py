"""A stand-in `claude` executable that replays whole real Claude Code runs, one per invocation, in a planned order.

Usage: replay_claude.py PLAN [claude arguments...]. PLAN is a JSON file:
{"runs": [NAME, ...], "calls": FILE, "counter": FILE}. Invocation k plays runs[k] (the last one again once the
list is used up). NAME is a folder of tests/fixtures/claude/runs/ (its stdout and stderr are printed and its exit
status returned), or "work": finish the story in RALPH_TASK_ID like story_agent.py (write work-ID.txt, mark it
passing in prd.json) and print the successful tool run claude_mock_tool_streamjson, or "limit-ahead": the 5-hour
limit claude_mock_oauth_unified_rejected_streamjson with its reset (every `"resetsAt"`) moved to five hours from
now, as a limit met today would say. Each invocation appends
{"args": [...], "stdin_bytes": N} to FILE, so a test can check the flags ralph passed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "claude", "runs")

plan_path, args = sys.argv[1], sys.argv[2:]
with open(plan_path, encoding="utf-8") as handle:
    plan = json.load(handle)
prompt = sys.stdin.buffer.read()
with open(plan["calls"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"args": args, "stdin_bytes": len(prompt)}) + "\n")
try:
    with open(plan["counter"], encoding="utf-8") as handle:
        count = int(handle.read() or 0)
except FileNotFoundError:
    count = 0
with open(plan["counter"], "w", encoding="utf-8") as handle:
    handle.write(str(count + 1))
name = plan["runs"][min(count, len(plan["runs"]) - 1)]

if name == "work":
    finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])
    name = "claude_mock_tool_streamjson"

ahead = name == "limit-ahead"
if ahead:
    name = "claude_mock_oauth_unified_rejected_streamjson"

folder = os.path.join(RUNS, name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    out = handle.read()
    if ahead:
        out = re.sub(rb'"resetsAt":\d+', b'"resetsAt":%d' % (int(time.time()) + 5 * 3600), out)
    sys.stdout.buffer.write(out)
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    sys.exit(int(handle.read().strip()))
