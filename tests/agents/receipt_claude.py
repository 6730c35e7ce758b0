"""A stand-in `claude` that plays one planned Claude Code turn per call, for `ralph report`'s receipt: the tests
and bench/report_screenshots.py run the real `ralph run --agent claude` with it to make real record files.

Usage: receipt_claude.py PLAN [claude arguments...]. PLAN is a JSON file: {"steps": [STEP, ...], "counter": FILE}.
Call k plays steps[k] (the last one again once they are used up). A STEP is an object:
  "do":     "pass" (finish the story in RALPH_TASK_ID like story_agent.py, and say so), "claim" (say the story is
            done and COMPLETE without finishing it: a claim ralph refuses), "work" (write a file, say nothing),
            "fail" (an error result, exit 1), "limit" (Claude Code's usage-limit result, resetting now, exit 1)
  "cost", "input", "output", "cache_read", "cache_write": the result's total_cost_usd and token usage
  "model":  the model named (default claude-opus-4-5-20251101)
  "sleep":  seconds to work before answering (the screenshots' bars; the tests use none)
It prints the stream-json events Claude Code 2.1 prints for one turn (shapes of tests/fixtures/claude/gleam_*).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

from _story import finish_story, next_call  # tests/agents/_story.py (this folder is on sys.path)

sys.stdin.read()
with open(sys.argv[1], encoding="utf-8") as handle:
    plan = json.load(handle)
count = next_call(plan["counter"])
step = plan["steps"][min(count, len(plan["steps"]) - 1)]
task = os.environ.get("RALPH_TASK_ID", "")
time.sleep(float(step.get("sleep", 0)))

do = step.get("do", "work")
failed = do in ("fail", "limit")
if do == "pass":
    finish_story(task, os.environ["RALPH_FEATURE_DIR"])
    text = f"Implemented {task}; its tests pass.\n<ralph>DONE {task}</ralph>"
elif do == "claim":
    text = f"{task} is written, so the feature is done.\n<promise>COMPLETE</promise>"
elif do == "fail":
    text = f"Error: the tests of {task} failed: 2 of 9"
elif do == "limit":
    text = f"Claude AI usage limit reached|{int(time.time())}"
else:
    with open(f"notes-{task}.txt", "a", encoding="utf-8") as handle:
        handle.write("more notes\n")
    text = f"Started on {task}; more to do."

model = step.get("model", "claude-opus-4-5-20251101")
session = str(uuid.uuid4())
usage = {
    "input_tokens": int(step.get("input", 0)),
    "cache_creation_input_tokens": int(step.get("cache_write", 0)),
    "cache_read_input_tokens": int(step.get("cache_read", 0)),
    "output_tokens": int(step.get("output", 0)),
    "service_tier": "standard",
}
events = [
    {"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": session, "model": model, "tools": []},
    {
        "type": "assistant",
        "message": {
            "model": model,
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": usage,
        },
        "session_id": session,
    },
    {
        "type": "result",
        "subtype": "error_during_execution" if failed else "success",
        "is_error": failed,
        "duration_ms": 2360,
        "num_turns": 3,
        "result": text,
        "session_id": session,
        "total_cost_usd": step.get("cost", 0.0),
        "usage": usage,
    },
]
for event in events:
    print(json.dumps(event), flush=True)
sys.exit(1 if failed else 0)
