"""Does what a JSON plan says for the current iteration: the tool for the signal-analysis tests.

argv[1]: a JSON file mapping an iteration number ("1", "2", ...; "*" for any other) to steps,
run in this order:
  "echo_prompt": true       print the whole prompt it got on stdin
  "echo_line": "TEXT"       print the one prompt line that contains TEXT (exit 3 when there is none)
  "write": {PATH: TEXT}     write files (relative to the project)
  "signals": [[KIND, ...]]  run `ralph signal KIND ...` for each (through `ralph` on PATH)
  "unnumbered": true        run those without RALPH_ITERATION (a record that names no iteration)
  "pass": "all" | [IDS]     set passes: true in prd.json for those stories
  "say": "TEXT"             print TEXT as it is
  "say_err": "TEXT"         write TEXT to stderr
  "which": FILE             append the path `ralph` resolves to on PATH (or "") to FILE
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

prompt = sys.stdin.read()
with open(sys.argv[1], encoding="utf-8") as handle:
    plan = json.load(handle)
iteration = os.environ["RALPH_ITERATION"]
steps = plan.get(iteration, plan.get("*", {}))

if steps.get("echo_prompt"):
    sys.stdout.write(prompt)
if "echo_line" in steps:
    lines = [line for line in prompt.splitlines() if steps["echo_line"] in line]
    if not lines:
        print(f"no prompt line contains {steps['echo_line']!r}", file=sys.stderr)
        sys.exit(3)
    print(lines[0])
sys.stdout.flush()
for path, text in steps.get("write", {}).items():
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
for words in steps.get("signals", []):
    ralph = shutil.which("ralph")
    if ralph is None:
        print("ralph is not on PATH", file=sys.stderr)
        sys.exit(4)
    env = dict(os.environ)
    if steps.get("unnumbered"):
        del env["RALPH_ITERATION"]
    subprocess.run([ralph, "signal", *words], check=True, env=env)
if "pass" in steps:
    prd_path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    for story in prd["userStories"]:
        if steps["pass"] == "all" or story["id"] in steps["pass"]:
            story["passes"] = True
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
if "say" in steps:
    sys.stdout.write(steps["say"])
if "say_err" in steps:
    sys.stderr.write(steps["say_err"])
if "which" in steps:
    with open(steps["which"], "a", encoding="utf-8") as handle:
        handle.write((shutil.which("ralph") or "") + "\n")
