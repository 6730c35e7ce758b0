"""A goal-mode agent (seed 001): reads the mode from its prompt and answers with a JSON result.

- planning: adds GOAL_STEPS (comma-separated; default "write a.txt,write b.txt") as new steps, but only
  when the prompt lists no steps yet; later planning iterations add nothing;
- executing: writes the step's file (`<step id>.txt`) and reports the step complete (with GOAL_STUCK=1:
  does nothing and reports nothing done);
- reflecting: reports goal-complete (with GOAL_REFLECT_NOTHING=1: continues, adding nothing).

It appends "<iteration> <mode> <focus>" to GOAL_LOG (when set) so tests can see the modes it was in.
Environment switches: GOAL_ALWAYS_COMPLETE=1 claims goal-complete every iteration; GOAL_NEEDS_HUMAN=N
asks for a human at iteration N; GOAL_BAD_JSON=N prints a malformed result at iteration N and
GOAL_NO_JSON=N none at all.
"""

from __future__ import annotations

import json
import os
import re
import sys

prompt = sys.stdin.read()
iteration = int(os.environ["RALPH_ITERATION"])
mode = re.search(r"^## Mode: (\w+)", prompt, re.MULTILINE)
mode_name = mode.group(1) if mode else "unknown"
focus = re.search(r"^Work on (step-\d+), and only on it:", prompt, re.MULTILINE)
step = focus.group(1) if focus else "-"
if os.environ.get("GOAL_LOG"):
    with open(os.environ["GOAL_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{iteration} {mode_name} {step}\n")


def at(name: str) -> bool:
    return os.environ.get(name, "") == str(iteration)


result: dict[str, object] = {"status": "continue", "summary": f"iteration {iteration} ({mode_name})"}
if os.environ.get("GOAL_ALWAYS_COMPLETE"):
    result = {"status": "goal-complete", "summary": "done, I think", "goalCompleteSummary": "all of it"}
elif at("GOAL_NEEDS_HUMAN"):
    result = {
        "status": "needs-human",
        "summary": "blocked",
        "humanNeeded": {"reason": "DATABASE_URL is not set", "details": "add it to .env and run again"},
    }
elif mode_name == "planning" and "(none yet)" in prompt:
    steps = os.environ.get("GOAL_STEPS", "write a.txt,write b.txt").split(",")
    result["pendingSteps"] = [{"id": None, "prompt": text} for text in steps]
elif mode_name == "executing" and step != "-" and not os.environ.get("GOAL_STUCK"):
    with open(f"{step}.txt", "w", encoding="utf-8") as handle:
        handle.write(f"done in iteration {iteration}\n")
    result["completedStepIds"] = [step]
elif mode_name == "reflecting" and not os.environ.get("GOAL_REFLECT_NOTHING"):
    result = {"status": "goal-complete", "summary": "checked", "goalCompleteSummary": "both files written"}

print(f"goal agent: iteration {iteration}, {mode_name}")
if at("GOAL_NO_JSON"):
    print("I forgot the result block.")
elif at("GOAL_BAD_JSON"):
    print('```json\n{"status": "continue", "completedStepIds": [\n```')
else:
    print("```json\n" + json.dumps(result, indent=2) + "\n```")
