"""A stand-in for the imagined `acme` CLI of docs/agents.md's plugin example: reads the prompt on stdin and
prints acme's JSON lines. ACME_MODE=work finishes the story in RALPH_TASK_ID (a tool event, the text, the usage);
ACME_MODE=quota prints a spent quota with its reset (ACME_RESETS_AT, Unix seconds) and exits 1. Its arguments
are appended, one JSON list per call, to ACME_CALLS."""

from __future__ import annotations

import json
import os
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

prompt = sys.stdin.read()
with open(os.environ["ACME_CALLS"], "a", encoding="utf-8") as calls:
    calls.write(json.dumps(sys.argv[1:]) + "\n")
task = os.environ["RALPH_TASK_ID"]
if os.environ.get("ACME_MODE") == "quota":
    resets = int(os.environ["ACME_RESETS_AT"])
    print(json.dumps({"type": "error", "code": "quota", "message": "quota spent", "resets_at": resets}))
    sys.exit(1)
print(json.dumps({"type": "tool", "name": "edit", "input": f"work-{task}.txt"}), flush=True)
finish_story(task, os.environ["RALPH_FEATURE_DIR"])
print(json.dumps({"type": "text", "text": f"{task} is done. <promise>COMPLETE</promise>"}))
print(json.dumps({"type": "usage", "input": 1200, "output": 80, "model": "acme-large-2"}))
