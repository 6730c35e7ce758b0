"""Works like story_agent, but only once the test lets it: prints what it is doing, then waits for
the file GATE_DIR/go-N (N = RALPH_ITERATION) before it finishes the story. The monitor and tmux tests
use it to hold the loop at a known point while they look at the screen.

Argument: GATE_DIR, where it also writes its PID (pid-N) when it starts. Output includes terminal
escape sequences on purpose (a hostile agent's): a monitor must show the words, never the sequences.
"""

from __future__ import annotations

import json
import os
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

gate_dir = sys.argv[1]
sys.stdin.read()
task = os.environ["RALPH_TASK_ID"]
iteration = os.environ["RALPH_ITERATION"]
with open(os.path.join(gate_dir, f"pid-{iteration}"), "w", encoding="utf-8") as handle:
    handle.write(str(os.getpid()))
print(f"gate agent: working on {task}", flush=True)
print("\x1b[2J\x1b[Hscreen-cleared-attempt \x1b]0;evil-title\x07", flush=True)
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash",
      "input": {"command": f"pytest -k {task}"}}]}}), flush=True)  # fmt: skip
go = os.path.join(gate_dir, f"go-{iteration}")
while not os.path.exists(go):  # released by the test; no timing is asserted on
    time.sleep(0.05)
prd = finish_story(task, os.environ["RALPH_FEATURE_DIR"])
print(f"gate agent: {task} done", flush=True)
if all(story["passes"] for story in prd["userStories"]):
    print("<promise>COMPLETE</promise>")
