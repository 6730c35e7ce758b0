"""Does what the prompt's current-story line says, and only that: sets `"passes": true` for the story it names, in
the file and the array it names (prd.json's own shape: `"stories"`, a top-level array ...), then commits.

It knows nothing of prd.json's schema but what the prompt tells it: a prompt whose instruction does not fit the
file leaves the story open (or this agent failing), and the run says so.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

# ralph's words (tasks/prd_json.py PrdSource.describe): ... set `"passes": true` for ID in FILE (its "KEY" array).
INSTRUCTION = re.compile(
    r'set `"passes": true` for (?P<id>\S+) in (?P<file>\S+?)(?: \(its "(?P<key>[^"]+)" array\)'
    r"| \((?P<array>the array it holds)\))?\.$",
    re.MULTILINE,
)

prompt = sys.stdin.read()
said = INSTRUCTION.search(prompt)
if said is None:
    print("the prompt names no story to mark", file=sys.stderr)
    sys.exit(1)
path, story_id = said.group("file"), said.group("id")
with open(path, "rb") as handle:
    data = json.loads(handle.read())  # UTF-8, or UTF-16/32 with its byte-order mark
stories = data if said.group("array") else data[said.group("key") or "userStories"]
for story in stories:
    if story["id"] == story_id:
        story["passes"] = True
with open(path, "w", encoding="utf-8") as handle:
    handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
with open(f"work-{story_id}.txt", "w", encoding="utf-8") as handle:
    handle.write(f"done {story_id}\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"feat: {story_id}"], check=True)
print(f"finished {story_id}")
