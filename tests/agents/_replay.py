"""What every replay stand-in (replay_claude.py, replay_codex.py, ...) does: a whole real run of the CLI played
back byte for byte per invocation, in a planned order, each call recorded.

A replay is run as `replay_NAME.py PLAN [the CLI's arguments...]`. PLAN is a JSON file {"runs": [NAME, ...],
"calls": FILE, "counter": FILE}: invocation k plays runs[k] (the last one again once the list is used up), and
appends {"args", "stdin_bytes", "tz", "prompt_files"} to FILE (the size of every `*.prompt.md` its arguments name,
as it was while the stand-in ran: a CLI that takes its prompt in a file). A run named "work" (or "work:NAME")
first finishes the story in RALPH_TASK_ID like story_agent.py, then plays the replay's successful run (or NAME).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from _story import finish_story, next_call  # tests/agents/_story.py (this folder is on sys.path)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def this_run(done_by_work: str, more: Callable[[bytes], dict[str, Any]] | None = None) -> tuple[str, list[str]]:
    """The run this invocation plays (a "work" run's story already finished) and the CLI's arguments; the call
    is recorded (with what `more` makes of the prompt, for a replay that records more) and the plan's counter
    moved on."""
    plan_path, args = sys.argv[1], sys.argv[2:]
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    prompt = sys.stdin.buffer.read()
    named = sorted({path for arg in args for path in re.findall(r"(/\S+\.prompt\.md)", arg)})
    files = {path: os.path.getsize(path) if os.path.isfile(path) else None for path in named}
    call = {"args": args, "stdin_bytes": len(prompt), "tz": os.environ.get("TZ"), "prompt_files": files}
    call.update(more(prompt) if more is not None else {})
    with open(plan["calls"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(call) + "\n")
    count = next_call(plan["counter"])
    name = plan["runs"][min(count, len(plan["runs"]) - 1)]
    if name == "work" or name.startswith("work:"):
        finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])
        name = name.partition(":")[2] or done_by_work
    return name, args


def read(folder: str, name: str) -> bytes:
    with open(os.path.join(folder, name), "rb") as handle:
        return handle.read()


def play(folder: str, stdout: bytes | None = None) -> NoReturn:
    """Print the captured run in `folder` (its stdout, or `stdout` in its place, then its stderr) and exit with
    its status. A run whose status is 124 was stopped by `timeout` when it was captured: it prints what it printed,
    then stays silent, as the CLI did, until it is stopped."""
    sys.stdout.buffer.write(read(folder, "stdout") if stdout is None else stdout)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(read(folder, "stderr"))
    sys.stderr.buffer.flush()
    code = int(read(folder, "rc").decode().strip())
    if code == 124:
        signal.pause()
    sys.exit(code)
