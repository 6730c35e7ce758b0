"""Leaks $MY_API_KEY (a secret by its name) and $LEAK_SHAPE (a key by its shape only) through every channel.

$LEAK_STEPS names one action per iteration, comma-separated ("leak,fail,pass,blocked"):
  leak     final text, a <ralph>LEARN: ...</ralph> tag, a RALPH_STATUS block's recommendation, `ralph signal learn`,
           a secret split by a stderr line written between its halves (stdout and stderr), a 70 KB line made of
           the secret on stdout and on stderr (so a cut anywhere falls inside one), and a completion claim
  fail     a file written, then a stderr line naming the secret and exit 1 (the error ralph reports)
  pass     a file written, the first open story marked passing, the secret in the final text and a LEARN tag
  blocked  `ralph signal blocked`, STATUS: BLOCKED with the key as its reason, the secret in the last paragraph
  goal     goal mode: the secret in the JSON result's summary, new steps' prompts, and the goal's summary
Nothing the agent writes into the project holds a secret: whatever a test finds there, ralph wrote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

prompt = sys.stdin.read()
secret = os.environ["MY_API_KEY"]
shaped = os.environ["LEAK_SHAPE"]
number = int(os.environ["RALPH_ITERATION"])
steps = os.environ["LEAK_STEPS"].split(",")
action = steps[min(number, len(steps)) - 1]


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def signal(*words: str) -> None:
    subprocess.run([sys.executable, "-m", "ralphloop", "signal", *words], check=True, stdout=subprocess.DEVNULL)


def write_work() -> None:
    with open(f"work-{number}.txt", "w", encoding="utf-8") as handle:
        handle.write(f"iteration {number}\n")


def split_by_stderr(value: str) -> None:
    """Half of `value` on stdout, a whole stderr line, then the other half: the log sees them interleaved."""
    for _ in range(5):
        out(f"interleaved {value[:12]}")
        err("a warning between the halves\n")
        out(f"{value[12:]} end\n")
        err(f"stderr half {value[:12]}")
        out("a stdout line between the halves\n")
        err(f"{value[12:]} end\n")


def long_line(value: str) -> str:
    """A line over 70 KB of `.VALUE.VALUE...`: a cut at any byte but a dot splits one copy of the value."""
    return ("." + value) * (70 * 1024 // (len(value) + 1) + 1) + "\n"


def goal_result() -> dict[str, object]:
    mode = re.search(r"^## Mode: (\w+)", prompt, re.MULTILINE)
    focus = re.search(r"^Work on (step-\d+), and only on it:", prompt, re.MULTILINE)
    name = mode.group(1) if mode else ""
    if name == "planning" and "(none yet)" in prompt:
        return {
            "status": "continue",
            "summary": f"planned with {secret}",
            "pendingSteps": [{"id": None, "prompt": f"deploy using {secret} and {shaped}"}],
        }
    if name == "executing" and focus:
        write_work()
        return {"status": "continue", "summary": f"deployed with {shaped}", "completedStepIds": [focus.group(1)]}
    return {"status": "goal-complete", "summary": f"checked {secret}", "goalCompleteSummary": f"done {shaped}"}


if action == "leak":
    signal("learn", f"the deploy token is {secret} and {shaped}")
    split_by_stderr(secret)
    split_by_stderr(shaped)
    out(long_line(secret))
    err(long_line(shaped))
    out(long_line(shaped))
    err(long_line(secret))
    out(f"<ralph>LEARN: log in with {secret} or {shaped}</ralph>\n")
    out(f"---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nRECOMMENDATION: rotate {secret}\n")
    out("---END_RALPH_STATUS---\n\n<promise>COMPLETE</promise>\n\n")
    out(f"All done: I used {secret} and {shaped} to deploy.\n")
elif action == "fail":
    write_work()
    out(f"trying {secret}\n")
    err(f"fatal: authentication failed for {secret} ({shaped})\n")
    sys.exit(1)
elif action == "pass":
    write_work()
    prd_path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    next(story for story in prd["userStories"] if not story["passes"])["passes"] = True
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    out(f"<ralph>LEARN: the key {shaped} works</ralph>\n\nStory done with {secret}.\n")
elif action == "blocked":
    signal("blocked", f"need a new {secret}")
    out(f"---RALPH_STATUS---\nSTATUS: BLOCKED\nEXIT_SIGNAL: false\nRECOMMENDATION: revoke {shaped}\n")
    out(f"---END_RALPH_STATUS---\n\nI am stuck: {secret} and {shaped} are refused.\n")
elif action == "goal":
    out(f"working with {secret}\n```json\n{json.dumps(goal_result(), indent=2)}\n```\n")
