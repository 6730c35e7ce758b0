"""Finishes the story it is given: writes a file, marks the story passing, commits.

Options: --promise (print <promise>COMPLETE</promise> when every story passes),
--no-commit, --fail-on ID (exit 1 without doing anything for that story),
--record FILE (append one JSON line per run: iteration, task id, prompt size).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

parser = argparse.ArgumentParser()
parser.add_argument("--promise", action="store_true")
parser.add_argument("--no-commit", action="store_true")
parser.add_argument("--fail-on", default="")
parser.add_argument("--record", default="")
options = parser.parse_args()

prompt = sys.stdin.read()
task = os.environ["RALPH_TASK_ID"]
feature_dir = os.environ["RALPH_FEATURE_DIR"]
if options.record:
    with open(options.record, "a", encoding="utf-8") as handle:
        handle.write(
            json.dumps(
                {
                    "iteration": int(os.environ["RALPH_ITERATION"]),
                    "task": task,
                    "prompt_bytes": len(prompt.encode()),
                    "prompt_file": os.environ["RALPH_PROMPT_FILE"],
                }
            )
            + "\n"
        )
if task == options.fail_on:
    print(f"cannot do {task}", file=sys.stderr)
    sys.exit(1)

prd = finish_story(task, feature_dir)
if not options.no_commit:
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"feat: {task}"], check=True)
print(f"finished {task}")
if options.promise and all(story["passes"] for story in prd["userStories"]):
    print("<promise>COMPLETE</promise>")
