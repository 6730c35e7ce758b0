"""`ralph run --parallel`: the wall time of six independent stories whose agent works 2 s each, one loop at a
time (`--parallel 1`, today's single loop) against three at once (`--parallel 3`; aim: at least 2.5× faster),
and the coordinator's own time per merge (aim: 300 ms at most): from a loop's end to its story landed and its
worktree removed (taking its pass mark and progress off its branch, the rebase, the mark's commit, the
compare-and-swap, keeping its records), read from fleet.jsonl's monotonic stamps. The machine's cores are
shared by the coordinator, the loops and their agents: on 2 cores each loop's own start (~0.5 s of CPU: the
interpreter, imports, the run's checks) is what stands between the measured and the ideal 3×.

ralph runs as users have it, with its runtime dependencies alone (bench/_versions.py; `--dev-venv`: the project's
own environment).

    .venv/bin/python bench/parallel.py [--sleep S] [--stories N] [--dev-venv]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from _project import ENV, make_project
from _versions import REPO, user_python

AGENT = """\
import json, os, subprocess, sys, time
sys.stdin.read()
time.sleep(float(sys.argv[1]))
task = os.environ["RALPH_TASK_ID"]
open(f"work-{task}.txt", "w").write(f"done {task}\\n")
path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
prd = json.load(open(path))
for story in prd["userStories"]:
    story["passes"] = story["passes"] or story["id"] == task
json.dump(prd, open(path, "w"), indent=2)
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"feat: {task}"], check=True)
"""


def one(parallel: int, stories: int, sleep: float, python: str) -> tuple[float, list[float]]:
    ralph = [python, "-m", "ralphloop"]
    root, env = make_project(stories, ralph=ralph, env={**ENV, "PYTHONPATH": os.path.join(REPO, "src")})
    prd_path = os.path.join(root, ".ralph", "feat", "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    prd["branchName"] = "ralph/feat"  # not checked out: the queue moves it itself
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    subprocess.run(["git", "commit", "-qam", "branch"], cwd=root, env=env, check=True)
    agent = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-agent-"), "agent.py")
    with open(agent, "w", encoding="utf-8") as handle:
        handle.write(AGENT)
    command = shlex.join([sys.executable, agent, str(sleep)])
    started = time.monotonic()
    done = subprocess.run(
        [*ralph, "run", "--parallel", str(parallel), "--agent-cmd", command],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"--parallel {parallel} failed: {done.stdout.decode()}{done.stderr.decode()}")
    return wall, _merge_costs(os.path.join(root, ".ralph", "feat", "fleet.jsonl"))


def _merge_costs(journal: str) -> list[float]:
    """Per merged story, the coordinator's own time from its turn in the queue to its worktree removed (taking its
    mark and entries off its branch, the rebase, the mark's commit, the compare-and-swap, keeping its records); the
    time a story waits for its turn is not counted."""
    if not os.path.exists(journal):
        return []
    with open(journal, encoding="utf-8") as handle:
        entries = [json.loads(line) for line in handle]
    began: dict[str, float] = {}
    costs = []
    for entry in entries:
        story, event = entry.get("story"), entry["event"]
        if event == "merging":
            began.setdefault(story, entry["mono"])
        elif event == "removed" and story in began:
            costs.append(entry["mono"] - began.pop(story))
    return costs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--stories", type=int, default=6)
    parser.add_argument("--dev-venv", action="store_true", help="run ralph with the project's own environment")
    options = parser.parse_args()
    python = sys.executable if options.dev_venv else user_python()
    serial, _ = one(1, options.stories, options.sleep, python)
    wide, merges = one(3, options.stories, options.sleep, python)
    print(f"{options.stories} stories, agent works {options.sleep:.1f} s each")
    print(f"  --parallel 1: {serial:6.2f} s")
    print(f"  --parallel 3: {wide:6.2f} s   ({serial / wide:.2f}x faster; aim >= 2.5x)")
    if merges:
        print(
            f"  coordinator per merge: median {statistics.median(merges) * 1000:.0f} ms, "
            f"max {max(merges) * 1000:.0f} ms over {len(merges)} merges (aim <= 300 ms)"
        )


if __name__ == "__main__":
    main()
