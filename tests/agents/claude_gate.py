"""A stand-in `claude -p --output-format stream-json --verbose` that works a story in the open, for the monitor's tests:
at once it prints its init, some text and tool uses, the last a `Bash: pytest -q` (what the monitor shows as "doing"),
then waits for FAKE_CLAUDE_GATES/go-N (N = RALPH_ITERATION) before it finishes the story (like story_agent.py)
and prints its result, costing $0.60 with 100 input and 400 output tokens. No timing is asserted on the wait.
"""

from __future__ import annotations

import json
import os
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

sys.stdin.read()
iteration, task = os.environ["RALPH_ITERATION"], os.environ["RALPH_TASK_ID"]
session, model = f"00000000-0000-4000-8000-00000000000{iteration[-1]}", "claude-opus-4-5-20251101"


def say(event: dict[str, object]) -> None:
    print(json.dumps({**event, "session_id": session}), flush=True)


def assistant(*content: dict[str, object]) -> None:
    say({"type": "assistant", "message": {"model": model, "role": "assistant", "content": list(content)}})


say({"type": "system", "subtype": "init", "cwd": os.getcwd(), "model": model, "tools": ["Bash", "Write"]})
assistant({"type": "text", "text": f"Working on {task}: first the tests, then the code."})
assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "src/app.py"}})
assistant({"type": "text", "text": "The parser needs a flag for the new option; adding a test for it first."})
assistant({"type": "tool_use", "id": "toolu_2", "name": "Write", "input": {"file_path": "tests/test_app.py"}})
assistant({"type": "tool_use", "id": "toolu_3", "name": "Edit", "input": {"file_path": "src/app.py"}})
assistant({"type": "tool_use", "id": "toolu_4", "name": "Bash", "input": {"command": "pytest -q"}})
go = os.path.join(os.environ["FAKE_CLAUDE_GATES"], f"go-{iteration}")
while not os.path.exists(go):
    time.sleep(0.05)
prd = finish_story(task, os.environ["RALPH_FEATURE_DIR"])
assistant({"type": "text", "text": f"{task} is done: its tests pass."})
usage = {"input_tokens": 100, "output_tokens": 400, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
done = all(story["passes"] for story in prd["userStories"])
text = f"{task} done." + ("\n<promise>COMPLETE</promise>" if done else "")
say({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "result": text,
     "total_cost_usd": 0.6, "usage": usage, "duration_ms": 1000})  # fmt: skip
