"""Works a Markdown checklist (TODO.md, fix_plan.md): ticks the first open `- [ ]` box (or `| [ ] |` table cell)
above any Optional/Future section, writes work-N.txt for it, and says COMPLETE when no open box is left there.

argv[1]: the checklist's path, relative to $RALPH_FEATURE_DIR. Also records each iteration's
RALPH_TASK_ID and the prompt's first line in seen.jsonl in the project (for the tests to read).
"""

from __future__ import annotations

import json
import os
import re
import sys

prompt = sys.stdin.read()
path = os.path.join(os.environ["RALPH_FEATURE_DIR"], sys.argv[1])
with open(path, encoding="utf-8", newline="") as handle:
    lines = handle.read().splitlines(keepends=True)
open_box = re.compile(r"^(\s*[-*+] |\s*\|(?:[^\n]*?\|)?\s*)\[ \](\s.*)$", re.DOTALL)
optional = re.compile(r"^#+ .*(optional|future|nice to have)", re.IGNORECASE)
ticked = None
for index, line in enumerate(lines):
    if optional.match(line):
        break
    match = open_box.match(line)
    if match:
        lines[index] = f"{match.group(1)}[x]{match.group(2)}"
        ticked = match.group(2).strip()
        break
with open(path, "w", encoding="utf-8", newline="") as handle:
    handle.write("".join(lines))
iteration = os.environ["RALPH_ITERATION"]
with open(f"work-{iteration}.txt", "w", encoding="utf-8") as handle:
    handle.write(f"{ticked}\n")
with open("seen.jsonl", "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"task": os.environ.get("RALPH_TASK_ID", ""), "ticked": ticked}) + "\n")
left = False
for line in lines:
    if optional.match(line):
        break
    left = left or bool(open_box.match(line))
print(f"ticked: {ticked}")
if not left:
    print("<promise>COMPLETE</promise>")
