"""A stand-in `claude` for the window tests on Temporal (issue 37): its first call does half the story (part-1.txt,
committed) and reports in stream-json that the account's 5-hour window is 60% used, resetting in RESET_S seconds
(argv[2]); every later call does the rest (part-2.txt, the story marked passing, committed). Calls are counted in
the file argv[1]. Claude Code's own arguments come after and are ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _story import finish_story, next_call  # tests/agents/_story.py (this folder is on sys.path)

counter, reset_s = sys.argv[1], float(sys.argv[2])
sys.stdin.read()
task = os.environ["RALPH_TASK_ID"]
call = next_call(counter)
if call == 0:
    with open("part-1.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{task}: the first half\n")
    info = {
        "status": "allowed",
        "rateLimitType": "five_hour",
        "utilization": 0.6,
        "resetsAt": int(time.time() + reset_s),
    }
    print(json.dumps({"type": "rate_limit_event", "rate_limit_info": info}))
else:
    with open("part-2.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{task}: the second half\n")
    finish_story(task, os.environ["RALPH_FEATURE_DIR"])
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"{task}: part {call + 1}"], check=True)
usage = {"input_tokens": 100, "output_tokens": 400}
result = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": f"part {call + 1}"}
print(json.dumps({**result, "total_cost_usd": 0.01, "usage": usage}))
