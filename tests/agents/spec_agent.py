"""Works story specs (seed 002): for the story in $RALPH_TASK_ID, writes work-ID.txt and answers as a
JSON plan says, per iteration ("1", "2", ...; "*" for any other):
  "done"           <ralph>DONE id</ralph> and a LEARN tag (the default)
  "legacy"         a bare [DONE]
  "other:ID"       <ralph>DONE ID</ralph> for another story (a mismatch)
  "fail:REASON"    <ralph>FAIL id: REASON</ralph>
  "silent"         no signal at all
  "crash"          exit 3
argv[1]: the plan file (optional). Every iteration appends {"iteration", "task", "prompt_bytes",
"has_spec"} to $SEEN_FILE (outside the project, so that undoing a failed attempt keeps it): has_spec
is whether the prompt held the spec's marker line.
"""

from __future__ import annotations

import json
import os
import sys

prompt = sys.stdin.read()
plan = {}
if len(sys.argv) > 1:
    with open(sys.argv[1], encoding="utf-8") as handle:
        plan = json.load(handle)
iteration = os.environ["RALPH_ITERATION"]
task = os.environ.get("RALPH_TASK_ID", "")
action = plan.get(iteration, plan.get("*", "done"))
with open(os.environ["SEEN_FILE"], "a", encoding="utf-8") as handle:
    record = {
        "iteration": int(iteration),
        "task": task,
        "prompt_bytes": len(prompt.encode()),
        "has_spec": f"MARKER-{task}" in prompt,
    }
    handle.write(json.dumps(record) + "\n")
with open(f"work-{task}.txt", "a", encoding="utf-8") as handle:
    handle.write(f"attempt in iteration {iteration}\n")
if action == "crash":
    sys.exit(3)
if action == "done":
    print(f"Implemented story {task}.\n<ralph>LEARN: story {task} needed care</ralph>\n<ralph>DONE {task}</ralph>")
elif action == "legacy":
    print("All good. [DONE]")
elif action.startswith("other:"):
    print(f"<ralph>DONE {action[6:]}</ralph>")
elif action.startswith("fail:"):
    print(f"<ralph>FAIL {task}: {action[5:]}</ralph>")
else:
    print("I worked on it.")
