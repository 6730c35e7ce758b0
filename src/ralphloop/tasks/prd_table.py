"""prd.json as `ralph run --parallel` reads and marks it, at any git version of the file: its stories in ralph's
shape, and the file with one story marked passing (the coordinator's commit after the story's merge)."""

from __future__ import annotations

import json

from ralphloop.core.errors import RalphError
from ralphloop.core.file_task import FileTask
from ralphloop.tasks.prd_json import problems_of
from ralphloop.tasks.prd_reading import STORIES, read_prd, story_items
from ralphloop.tasks.problems import raise_first

_LAST = 1 << 30  # a story without a numeric priority: after every one that has one


def file_tasks(raw: bytes, shown: str) -> list[FileTask]:
    """The stories `raw` holds; the file's first problem raised, named `shown`, when a run would refuse it."""
    reading = read_prd(raw)
    raise_first(problems_of(reading, shown))
    prd = reading.prd
    if prd is None:  # flawed, and the flaw raised above
        raise RalphError(f"{shown}: cannot be read")
    bodies = _bodies(raw)
    return [
        FileTask(
            id=str(story["id"]),
            title=str(story.get("title") or ""),
            done=story.get("passes") is True,
            priority=_priority(story.get("priority")),
            depends_on=tuple(str(need) for need in needs) if isinstance(needs := story.get("dependsOn"), list) else (),
            body=bodies.get(str(story["id"]), ""),
        )
        for story in prd[STORIES]
    ]


def marked(raw: bytes, task_id: str) -> bytes:
    """The file with story `task_id` passing, where the file keeps its stories (userStories, stories, ...)."""
    data = json.loads(raw)
    for item in story_items(data):
        if isinstance(item, dict) and item.get("id") == task_id:
            item["passes"] = True
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def _bodies(raw: bytes) -> dict[str, str]:
    """Each story's fields but its pass mark, as written, by id: what the coordinator may change of it."""
    try:
        stories = story_items(json.loads(raw))
    except (ValueError, RecursionError):
        return {}
    found = {}
    for story in stories:
        if isinstance(story, dict) and isinstance(story.get("id"), str):
            rest = {key: value for key, value in story.items() if key != "passes"}
            found[story["id"]] = json.dumps(rest, sort_keys=True)
    return found


def _priority(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else _LAST
