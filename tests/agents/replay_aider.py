"""A stand-in `aider` executable that replays whole real aider 0.86.2 runs (tests/fixtures/aider/), one per
invocation, in a planned order.

Usage: replay_aider.py PLAN [aider arguments...]. PLAN is a JSON file: {"runs": [NAME, ...], "calls": FILE,
"counter": FILE}. Invocation k plays runs[k] (the last one again once the list is used up): its stdout and stderr
printed byte for byte and its exit status returned. "work" first finishes the story in RALPH_TASK_ID like
story_agent.py, then plays mock_ok. Each invocation appends {"args", "prompt_bytes", "stdin_bytes", "browser"} to
FILE: `prompt_bytes` is the size of the file after --message-file, read as aider reads it.
"""

from __future__ import annotations

import json
import os
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "aider")

plan_path, args = sys.argv[1], sys.argv[2:]
with open(plan_path, encoding="utf-8") as handle:
    plan = json.load(handle)
prompt_file = args[args.index("--message-file") + 1] if "--message-file" in args else None
prompt = b""
if prompt_file is not None:
    with open(prompt_file, "rb") as handle:
        prompt = handle.read()
stdin = sys.stdin.buffer.read()
call = {"args": args, "prompt_bytes": len(prompt), "stdin_bytes": len(stdin), "browser": os.environ.get("BROWSER")}
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
    name = "mock_ok"
folder = os.path.join(RUNS, name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    sys.stdout.buffer.write(handle.read())
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    sys.exit(int(handle.read().strip()))
