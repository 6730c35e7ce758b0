"""An agent for the steering tests (issue 36) that the test paces: each iteration it appends "started N" and "task
ID started N" to LOG (argv[1]), and "guidance N: TEXT" for each line of the prompt's user-guidance section, then
writes work-N.txt in the worktree (a change an undo must take back) and waits until GATES/N (argv[2]) exists (a
minute at most), then marks story S-N passing in PRD (argv[3], when given: progress, so the breaker stays shut;
"loop": its own task, in its feature folder's prd.json), appends "ended N" and exits 0. With STEER_ASK=N (or *:
every one) in its environment, iteration N instead asks for a human (a needs-human JSON result: "which database?")
and ends at once, its story open.
"""

from __future__ import annotations

import json
import os
import sys
import time

log, gates = sys.argv[1], sys.argv[2]
number = os.environ["RALPH_ITERATION"]
prompt = sys.stdin.read()
task = os.environ.get("RALPH_TASK_ID", "")
lines = [f"started {number}", f"task {task} started {number}"]
_, found, section = prompt.partition("## Guidance from the user (ralph say)")
if found:
    for line in section.split("\n## ", 1)[0].splitlines():
        if line.strip():
            lines.append(f"guidance {number}: {line.strip()}")
with open(log, "a", encoding="utf-8") as handle:
    handle.write("\n".join(lines) + "\n")
if os.environ.get("STEER_ASK") in (number, "*"):
    result = {"status": "needs-human", "summary": "a question", "humanNeeded": {"reason": "which database?"}}
    print(f"I need you.\n\n```json\n{json.dumps(result)}\n```")
    sys.exit(0)
with open(f"work-{number}.txt", "w", encoding="utf-8") as handle:
    handle.write(f"iteration {number}\n")
deadline = time.monotonic() + 60
while not os.path.exists(os.path.join(gates, number)) and time.monotonic() < deadline:
    time.sleep(0.05)
keep = os.environ.get("STEER_KEEP", "").split(",")  # tasks it never passes (a loop the test stops)
if len(sys.argv) > 3 and task not in keep:  # "loop": its own task, in its feature folder's prd.json
    own = sys.argv[3] == "loop"
    path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json") if own else sys.argv[3]
    with open(path, encoding="utf-8") as handle:
        prd = json.load(handle)
    for story in prd["userStories"]:
        story["passes"] = story["passes"] or story["id"] == (task if own else f"S-{number}")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
with open(log, "a", encoding="utf-8") as handle:
    handle.write(f"ended {number}\n")
