"""A stand-in agent CLI (`amp`, `cursor-agent`) that replays whole runs of tests/fixtures/<cli>/, one per
invocation, in a planned order.

Usage: replay_cli.py PLAN [arguments...]. PLAN is a JSON file: {"fixtures": FOLDER, "runs": [NAME, ...], "calls":
FILE, "counter": FILE}. Invocation k plays runs[k] (the last one again once the list is used up): its stdout and
stderr printed byte for byte and its exit status returned. A name "work:RUN" first finishes the story in
RALPH_TASK_ID like story_agent.py, then plays RUN. Each invocation appends to FILE: {"args", "stdin_bytes",
"prompt_files"} (the size of every `*.prompt.md` its arguments name, read while it runs).
"""

from __future__ import annotations

import json
import os
import re
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

plan_path, args = sys.argv[1], sys.argv[2:]
with open(plan_path, encoding="utf-8") as handle:
    plan = json.load(handle)
stdin = sys.stdin.buffer.read()
named = {path for arg in args for path in re.findall(r"(/\S+\.prompt\.md)", arg)}
prompt_files = {path: os.path.getsize(path) if os.path.isfile(path) else None for path in sorted(named)}
with open(plan["calls"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"args": args, "stdin_bytes": len(stdin), "prompt_files": prompt_files}) + "\n")
try:
    with open(plan["counter"], encoding="utf-8") as handle:
        count = int(handle.read() or 0)
except FileNotFoundError:
    count = 0
with open(plan["counter"], "w", encoding="utf-8") as handle:
    handle.write(str(count + 1))
name = plan["runs"][min(count, len(plan["runs"]) - 1)]
if name.startswith("work:"):
    finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])
    name = name.removeprefix("work:")
folder = os.path.join(plan["fixtures"], name)
with open(os.path.join(folder, "stdout"), "rb") as handle:
    sys.stdout.buffer.write(handle.read())
with open(os.path.join(folder, "stderr"), "rb") as handle:
    sys.stderr.buffer.write(handle.read())
with open(os.path.join(folder, "rc"), encoding="utf-8") as handle:
    sys.exit(int(handle.read().strip()))
