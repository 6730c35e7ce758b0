"""What the test agents do to "finish" a story: write work-ID.txt in the project, mark the story passing."""

from __future__ import annotations

import json
import os
from typing import Any


def finish_story(task: str, feature_dir: str) -> dict[str, Any]:
    """Write work-TASK.txt in the current folder and set the story's `passes` in prd.json; returns the prd."""
    with open(f"work-{task}.txt", "w", encoding="utf-8") as handle:
        handle.write(f"done {task}\n")
    prd_path = os.path.join(feature_dir, "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd: dict[str, Any] = json.load(handle)
    for story in prd["userStories"]:
        if story["id"] == task:
            story["passes"] = True
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    return prd


def next_call(counter: str) -> int:
    """This call's number among the agent's calls (0 first), counted in the file `counter`."""
    try:
        with open(counter, encoding="utf-8") as handle:
            count = int(handle.read() or 0)
    except FileNotFoundError:
        count = 0
    with open(counter, "w", encoding="utf-8") as handle:
        handle.write(str(count + 1))
    return count
