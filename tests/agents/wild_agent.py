"""Works whatever task file a real user wrote (tests/fixtures/wild/), as a real agent would: reads the prompt ralph
gave it, writes a file for the task, and marks that task done where the prompt says, in the file's own shape.

- a checklist (TODO.md, fix_plan.md): the prompt names the task's line ("line 12 of fix_plan.md"): its box is
  ticked there (`[ ]` → `[x]`, in a list or a table cell);
- prd.json (in the feature's folder): the story RALPH_TASK_ID names is found by its id wherever
  the file keeps its stories (`userStories`, `stories`, a top-level array) and gets `"passes": true`;
- a story spec: the agent ends with `<ralph>DONE id</ralph>` (ralph marks it).
"""

from __future__ import annotations

import json
import os
import re
import sys

prompt = sys.stdin.read()
iteration = os.environ["RALPH_ITERATION"]
task = os.environ.get("RALPH_TASK_ID", "")
feature = os.environ["RALPH_FEATURE_DIR"]
root = os.environ.get("RALPH_PROJECT_ROOT") or os.getcwd()

with open(os.path.join(root, f"wild-work-{iteration}.txt"), "w", encoding="utf-8") as handle:
    handle.write(f"task {task}\n")


def find(path: str) -> str:
    for base in (root, feature, os.getcwd()):
        candidate = os.path.join(base, path)
        if os.path.isfile(candidate):
            return candidate
    return path


box_line = re.search(r"line (\d+) of (\S+?)\.? (?:Work|When)", prompt)
prd = os.path.join(feature, "prd.json")
if box_line:
    path = find(box_line.group(2))
    with open(path, encoding="utf-8", newline="") as handle:
        lines = handle.read().splitlines(keepends=True)
    number = int(box_line.group(1)) - 1
    lines[number] = re.sub(r"\[ \]", "[x]", lines[number], count=1)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(lines))
    print(f"ticked line {number + 1} of {path}")
elif os.path.isfile(prd):
    with open(prd, encoding="utf-8") as handle:
        data = json.load(handle)
    stories = data if isinstance(data, list) else data.get("userStories", data.get("stories", []))
    for item in stories:
        if str(item.get("id")) == task:
            item["passes"] = True
    with open(prd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    print(f"story {task} passes")
elif task:
    print(f"<ralph>DONE {task}</ralph>")
else:
    print("no task in the prompt")
    sys.exit(1)
