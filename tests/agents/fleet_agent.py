"""A story's agent for the parallel-run tests: does the story (work-ID.txt, the story marked passing in its
copy of prd.json) and commits everything with `git add -A`, as real agents do (pass marks and progress too).
Given ralph's conflict prompt (merge.resolve: agent) it resolves the merge instead, keeping both sides.

Options: --shared FILE (also write FILE with a line naming the story: two stories then edit the same line),
--compat (a story also writes compat.txt when another story's work is in its tree: what a gate that only fails after
the rebase asks for), --sleep S (work for S seconds first), --ledger FILE (append "ID PID SLOT" per start).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

parser = argparse.ArgumentParser()
parser.add_argument("--shared", default="")
parser.add_argument("--compat", action="store_true")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--ledger", default="")
options = parser.parse_args()

prompt = sys.stdin.read()
task = os.environ["RALPH_TASK_ID"]
if prompt.startswith("# Resolve a merge conflict"):  # merge.resolve: agent: keep both sides, finish the merge
    listed = subprocess.run(
        ["git", "diff", "--name-only", "--diff-filter=U"], capture_output=True, text=True, check=True
    )
    for name in listed.stdout.split():
        with open(name, encoding="utf-8") as handle:
            kept = [line for line in handle if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
        with open(name, "w", encoding="utf-8") as handle:
            handle.writelines(kept)
        subprocess.run(["git", "add", name], check=True)
    subprocess.run(["git", "commit", "-q", "--no-edit"], check=True)
    print("resolved")
    sys.exit(0)
if options.ledger:
    with open(options.ledger, "a", encoding="utf-8") as handle:
        slot, ports = os.environ.get("RALPH_SLOT", "-"), os.environ.get("RALPH_PORT_BASE", "-")
        handle.write(f"{task} {os.getpid()} {slot} {ports}\n")
if options.sleep:
    time.sleep(options.sleep)
if options.shared:
    with open(options.shared, "w", encoding="utf-8") as handle:
        handle.write(f"written by {task}\n")
others = sorted(name[5:-4] for name in os.listdir(".") if name.startswith("work-") and name != f"work-{task}.txt")
if options.compat and others:
    with open("compat.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{task} works with {', '.join(others)}\n")
finish_story(task, os.environ["RALPH_FEATURE_DIR"])
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"feat: {task}"], check=True)
print(f"finished {task}")
