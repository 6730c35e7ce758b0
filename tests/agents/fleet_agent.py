"""A story's agent for the parallel-run tests: does the story (work-ID.txt, the story marked passing in its
copy of prd.json) and commits everything with `git add -A`, as real agents do (pass marks and progress too).
Given ralph's conflict prompt (merge.resolve: agent) it resolves the merge instead, keeping both sides.

Options: --shared FILE (also write FILE with a line naming the story: two stories then edit the same line),
--compat (a story also writes compat.txt when another story's work is in its tree: what a gate that only fails after
the rebase asks for), --sleep S (work for S seconds first; --slow ID=S: story ID for S seconds), --ledger FILE
(append "ID PID SLOT" per start), --claude-cost C (as a stand-in `claude`: its arguments are Claude Code's, and it
ends with a stream-json result that reports C dollars and 100 + 400 tokens, for each story and each conflict it
resolves).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

parser = argparse.ArgumentParser()
parser.add_argument("--shared", default="")
parser.add_argument("--compat", action="store_true")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--slow", action="append", default=[])  # ID=SECONDS: that story works longer
parser.add_argument("--ledger", default="")
parser.add_argument("--claude-cost", type=float, default=None)
options, _ = parser.parse_known_args()  # a stand-in `claude` is also given Claude Code's own arguments


def say(text: str) -> None:
    if options.claude_cost is None:
        print(text)
        return
    usage = {"input_tokens": 100, "output_tokens": 400}
    result = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": text}
    print(json.dumps({**result, "total_cost_usd": options.claude_cost, "usage": usage}))


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
    say("resolved")
    sys.exit(0)
if options.ledger:
    with open(options.ledger, "a", encoding="utf-8") as handle:
        slot, ports = os.environ.get("RALPH_SLOT", "-"), os.environ.get("RALPH_PORT_BASE", "-")
        handle.write(f"{task} {os.getpid()} {slot} {ports}\n")
slow = dict(item.split("=", 1) for item in options.slow)
if options.sleep or task in slow:
    time.sleep(float(slow.get(task, options.sleep)))
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
say(f"finished {task}")
