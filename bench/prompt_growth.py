"""Prompt size while progress.txt grows by about 1 KB each iteration: at iteration 60 it must be at
most 1.25x its size at iteration 30 (pasting the whole file, as other Ralph tools do, gives about 2x).

Runs the real `ralph run` for 60 iterations over 61 stories with a command agent that finishes its
story each time (as a working agent does: `passes: true` in prd.json, so the circuit breaker sees
progress), appends a 1 KB entry to progress.txt and records the size of the prompt it was given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from _project import make_project

AGENT = r"""
import json, os, sys
prompt = sys.stdin.read()
n = int(os.environ["RALPH_ITERATION"])
prd_path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
with open(prd_path) as handle:
    prd = json.load(handle)
for story in prd["userStories"]:
    if story["id"] == os.environ["RALPH_TASK_ID"]:
        story["passes"] = True
with open(prd_path, "w") as handle:
    json.dump(prd, handle, indent=2)
with open(os.path.join(os.environ["RALPH_FEATURE_DIR"], "progress.txt"), "a") as handle:
    handle.write("\n---\nAgent notes for iteration %d\n%s\n" % (n, ("learned something " * 60)[:1000]))
with open(sys.argv[1], "a") as handle:
    handle.write(json.dumps({"iteration": n, "bytes": len(prompt.encode())}) + "\n")
"""


def main() -> None:
    root, env = make_project(stories=61)
    folder = tempfile.mkdtemp(prefix="ralph-bench-agent-")
    agent = os.path.join(folder, "agent.py")
    record = os.path.join(folder, "sizes.jsonl")
    with open(agent, "w", encoding="utf-8") as handle:
        handle.write(AGENT)
    subprocess.run(
        [sys.executable, "-m", "ralphloop", "run", "-n", "60", "--agent-cmd", f"{sys.executable} {agent} {record}"],
        cwd=root,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    if not os.path.exists(record):
        sys.exit(f"bench: the agent never ran (see {root})")
    with open(record, encoding="utf-8") as handle:
        sizes = {row["iteration"]: row["bytes"] for row in map(json.loads, handle)}
    progress = os.path.getsize(os.path.join(root, ".ralph", "feat", "progress.txt"))
    if 60 not in sizes:
        sys.exit(f"bench: the run stopped after {max(sizes)} iterations (see {root}/.ralph/feat/progress.txt)")
    ratio = sizes[60] / sizes[30]
    print(
        f"prompt bytes: iteration 1 {sizes[1]}, 30 {sizes[30]}, 60 {sizes[60]}; ratio 60/30 = {ratio:.2f} "
        f"(target <= 1.25); progress.txt is {progress} bytes at the end"
    )


if __name__ == "__main__":
    main()
