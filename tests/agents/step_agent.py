"""Does what a JSON plan says for the current iteration, then exits with the plan's code: for the guard tests.

argv[1]: a JSON file mapping an iteration number ("1", "2", ...: RALPH_ITERATION, which goes on across
runs; "*" for any other) to steps, run in this order:
  "record": FILE            first, append a JSON line to FILE: the iteration, HEAD, the branch and
                            `git status --porcelain` as this iteration found them
  "await": [FILE, N]        next, wait (a minute at most) until FILE has N lines, else exit 3 at once: what a test's
                            receiver got while the run goes on
  "write": {PATH: TEXT}     write files (relative to the project; folders are made)
  "append": {PATH: TEXT}    append to files
  "delete": [PATH]          delete files
  "rewrite": [PATH]         write each file again with the content it already has (a touch that changes nothing)
  "commit": "MESSAGE"       `git add -A`, then commit with MESSAGE
  "git": [[ARGS...], ...]   run `git ARGS` for each, in order, whatever each exits with (a merge that stops on
                            a conflict is the point); their output goes to stderr
  "pass": [IDS]             set passes: true in prd.json for those stories
  "say": "TEXT"             print TEXT on stdout
  "say_err": "TEXT"         print TEXT on stderr
  "hang": PIDFILE           write this process's PID to PIDFILE, then sleep for 5 minutes (for -t)
  "exit": N                 exit with code N (default 0)
In every PATH, TEXT and MESSAGE, {n} is the iteration number and {rand} a fresh random hex string
(a different temp path or id each time, for the same-error tests).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time

sys.stdin.read()
with open(sys.argv[1], encoding="utf-8") as handle:
    plan = json.load(handle)
iteration = os.environ["RALPH_ITERATION"]
steps = plan.get(iteration, plan.get("*", {}))


def fill(text: str) -> str:
    return text.replace("{n}", iteration).replace("{rand}", secrets.token_hex(6))


if "record" in steps:
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    branch = subprocess.run(
        ["git", "symbolic-ref", "-q", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    found = {"iteration": int(iteration), "head": head, "branch": branch, "status": sorted(status)}
    with open(steps["record"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(found) + "\n")


def line_count(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as handle:
        return len(handle.read().splitlines())


if "await" in steps:
    wanted, lines, deadline = steps["await"][0], int(steps["await"][1]), time.monotonic() + 60
    while line_count(wanted) < lines:
        if time.monotonic() > deadline:
            sys.exit(3)
        time.sleep(0.05)
for raw_path, text in steps.get("write", {}).items():
    path = fill(raw_path)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(fill(text))
for raw_path, text in steps.get("append", {}).items():
    with open(fill(raw_path), "a", encoding="utf-8") as handle:
        handle.write(fill(text))
for path in steps.get("delete", []):
    os.remove(path)
for path in steps.get("rewrite", []):
    with open(path, "rb") as binary:
        content = binary.read()
    with open(path, "wb") as rewritten:
        rewritten.write(content)
if "commit" in steps:
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", fill(steps["commit"])], check=True)
for args in steps.get("git", []):
    # never an editor: a merge, a rebase or a revert that goes through takes its message as it is
    quiet = {**os.environ, "GIT_EDITOR": "true"}
    subprocess.run(["git", *(fill(arg) for arg in args)], stdout=sys.stderr, env=quiet, check=False)
if "pass" in steps:
    prd_path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    for story in prd["userStories"]:
        if story["id"] in steps["pass"]:
            story["passes"] = True
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
if "say" in steps:
    print(fill(steps["say"]), flush=True)
if "say_err" in steps:
    print(fill(steps["say_err"]), file=sys.stderr, flush=True)
if "hang" in steps:
    with open(steps["hang"], "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    time.sleep(300)
sys.exit(int(steps.get("exit", 0)))
