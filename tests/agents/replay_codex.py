"""A stand-in `codex` executable that replays whole real Codex 0.169.0 runs (tests/fixtures/codex/), one per
invocation, in a planned order.

Usage: replay_codex.py PLAN [codex arguments...]. PLAN is a JSON file: {"runs": [NAME, ...], "calls": FILE,
"counter": FILE}. Invocation k plays runs[k] (the last one again once the list is used up): its stdout and stderr
printed byte for byte and its exit status returned. "work" first finishes the story in RALPH_TASK_ID like
story_agent.py, then plays mock_tool_json; "limit-ahead" plays mock_usage_limit_plus_json with its reset moved to
five hours from now (written as Codex writes it, in UTC). Each invocation appends {"args", "stdin_bytes", "tz"} to FILE.
"""

from __future__ import annotations

import json
import os
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "codex")

plan_path, args = sys.argv[1], sys.argv[2:]
with open(plan_path, encoding="utf-8") as handle:
    plan = json.load(handle)
prompt = sys.stdin.buffer.read()
with open(plan["calls"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"args": args, "stdin_bytes": len(prompt), "tz": os.environ.get("TZ")}) + "\n")
try:
    with open(plan["counter"], encoding="utf-8") as handle:
        count = int(handle.read() or 0)
except FileNotFoundError:
    count = 0
with open(plan["counter"], "w", encoding="utf-8") as handle:
    handle.write(str(count + 1))
name = plan["runs"][min(count, len(plan["runs"]) - 1)]
ahead = name == "limit-ahead"
if ahead:
    name = "mock_usage_limit_plus_json"
if name == "work":
    finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])
    name = "mock_tool_json"
folder = os.path.join(RUNS, name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    out = handle.read()
if ahead:
    when = time.gmtime(time.time() + 5 * 3600)
    suffix = "th" if 10 <= when.tm_mday % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(when.tm_mday % 10, "th")
    hour = when.tm_hour % 12 or 12
    said = f"{time.strftime('%b', when)} {when.tm_mday}{suffix}, {when.tm_year} {hour}:{when.tm_min:02d} "
    said += "AM" if when.tm_hour < 12 else "PM"
    out = out.replace(b"Nov 21st, 2026 1:04 AM", said.encode())
sys.stdout.buffer.write(out)
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    sys.exit(int(handle.read().strip()))
