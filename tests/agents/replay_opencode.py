"""A stand-in `opencode` executable that replays whole real opencode 1.18.33 runs (tests/fixtures/opencode/), one per
invocation, in a planned order.

Usage: replay_opencode.py PLAN [opencode arguments...]. PLAN is a JSON file: {"runs": [NAME, ...], "calls": FILE,
"counter": FILE}. Invocation k plays runs[k] (the last one again once the list is used up): its stdout and stderr
printed byte for byte and its exit status returned. "work" first finishes the story in RALPH_TASK_ID like
story_agent.py, then plays mock_tool_all_json (two shell commands, one failing, and no permission denial). A run
whose `rc` is 124 (stopped by `timeout` when it was captured) prints its output and then waits, silent, as opencode
did, until it is stopped. Each invocation appends {"args", "stdin", "pwd", "cwd", "permission"} to FILE.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "opencode")

plan_path, args = sys.argv[1], sys.argv[2:]
with open(plan_path, encoding="utf-8") as handle:
    plan = json.load(handle)
prompt = sys.stdin.buffer.read()
call = {
    "args": args,
    "stdin": prompt.decode("utf-8", "replace"),
    "pwd": os.environ.get("PWD"),
    "cwd": os.getcwd(),
    "permission": os.environ.get("OPENCODE_PERMISSION"),
}
with open(plan["calls"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps(call) + "\n")
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
    name = "mock_tool_all_json"
folder = os.path.join(RUNS, name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    sys.stdout.buffer.write(handle.read())
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
sys.stdout.flush()
sys.stderr.flush()
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    code = int(handle.read().strip())
if code == 124:
    signal.pause()  # silent until ralph stops it, as opencode waited out the provider's retry-after
sys.exit(code)
