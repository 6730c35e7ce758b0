"""A stand-in `copilot` executable that replays whole real Copilot CLI 1.0.102 runs (tests/fixtures/copilot/),
one per invocation, in a planned order.

Usage: replay_copilot.py PLAN [copilot arguments...]. PLAN is a JSON file: {"runs": [NAME, ...], "calls": FILE,
"counter": FILE}. Invocation k plays runs[k] (the last one again once the list is used up): its stdout and stderr
printed byte for byte, the usage file it wrote copied to the `--usage-output-file` path it was given (as the real
CLI writes it at its exit), and its exit status returned. "work" first finishes the story in RALPH_TASK_ID like
story_agent.py, then plays mock_ok_json ("work:NAME": then plays NAME). Each invocation appends {"args",
"stdin_bytes", "tz"} to FILE.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "copilot")

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
if name == "work" or name.startswith("work:"):
    finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])
    name = name.partition(":")[2] or "mock_ok_json"
folder = os.path.join(RUNS, name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    sys.stdout.buffer.write(handle.read())
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
usage = os.path.join(folder, "usage.json")
if "--usage-output-file" in args and os.path.exists(usage):
    shutil.copyfile(usage, args[args.index("--usage-output-file") + 1])
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    sys.exit(int(handle.read().strip()))
