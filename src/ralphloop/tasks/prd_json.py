"""prd.json (seed 003): user stories with `passes`, worked highest priority (1) first."""

from __future__ import annotations

import json
import re

import msgspec

from ralphloop.errors import RalphError
from ralphloop.protocols import Task, TaskView


class PrdStory(msgspec.Struct, rename="camel"):
    """One user story; unknown fields are kept on disk and ignored here."""

    id: str
    title: str
    priority: int
    passes: bool
    acceptance_criteria: list[str] = msgspec.field(default_factory=list)
    description: str = ""
    notes: str = ""


class Prd(msgspec.Struct, rename="camel"):
    """The whole file. feature/branchName/description/createdAt are optional so that the
    prd.json files of other Ralph tools (which say `project` instead) load too."""

    user_stories: list[PrdStory]
    feature: str = ""
    branch_name: str = ""
    description: str = ""
    created_at: str = ""


_MSGSPEC_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def parse_prd(raw: bytes, label: str) -> Prd:
    """Validate prd.json bytes; errors name `label` and the offending place."""
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise RalphError(f"{label}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RalphError(f"{label}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    try:
        prd = msgspec.convert(data, Prd)
    except msgspec.ValidationError as exc:
        raise RalphError(f"{label}: {_schema_message(str(exc))}") from None
    if not prd.user_stories:
        raise RalphError(f"{label}: userStories is empty (add at least one story)")
    seen: set[str] = set()
    for index, story in enumerate(prd.user_stories):
        if not story.id.strip():
            raise RalphError(f"{label}: userStories[{index}].id is empty")
        if story.id in seen:
            raise RalphError(f"{label}: userStories[{index}].id {story.id!r} is used twice")
        seen.add(story.id)
    return prd


def _schema_message(text: str) -> str:
    match = _MSGSPEC_PATH.search(text)
    where = ""
    if match:
        where = match.group("path").lstrip(".") or "top level"
        text = text[: match.start()]
    text = text.replace("`", "")
    text = text[0].lower() + text[1:] if text else text
    return f"{where}: {text}" if where else text


def pick_next(stories: list[PrdStory]) -> PrdStory | None:
    """The highest-priority story (1 = highest) that does not pass; file order breaks ties."""
    waiting = [story for story in stories if not story.passes]
    return min(waiting, key=lambda story: story.priority) if waiting else None


def to_task(story: PrdStory) -> Task:
    return Task(
        id=story.id,
        title=story.title,
        done=story.passes,
        priority=story.priority,
        description=story.description,
        acceptance_criteria=tuple(story.acceptance_criteria),
        notes=story.notes,
    )


class PrdSource:
    """The prd.json task source."""

    kind = "prd"

    def __init__(self, path: str, display: str | None = None) -> None:
        self.path = path
        self.display = display or path

    def load(self) -> TaskView:
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            raise RalphError(f"{self.display}: file not found") from None
        except OSError as exc:
            raise RalphError(f"{self.display}: cannot read: {exc.strerror}") from None
        prd = parse_prd(raw, self.display)
        upcoming = pick_next(prd.user_stories)
        return TaskView(
            tasks=tuple(to_task(story) for story in prd.user_stories),
            next_task=to_task(upcoming) if upcoming else None,
        )

    def describe(self, task: Task) -> str:
        lines = [
            f"## Current story: {task.id} - {task.title}",
            "",
            f'Priority {task.priority}. When it is done and its checks pass, set `"passes": true` for '
            f"{task.id} in {self.display}.",
        ]
        if task.description:
            lines += ["", task.description]
        if task.acceptance_criteria:
            lines += ["", "Acceptance criteria:"]
            lines += [f"- [ ] {criterion}" for criterion in task.acceptance_criteria]
        if task.notes:
            lines += ["", f"Notes: {task.notes}"]
        return "\n".join(lines)


def new_prd(feature: str, created_at: str) -> dict[str, object]:
    """The prd.json `ralph init` writes: the seed 003 schema with one example story."""
    return {
        "feature": feature,
        "branchName": f"feature/{feature}",
        "description": f"Describe what {feature} should do for its users.",
        "createdAt": created_at,
        "userStories": [
            {
                "id": "STORY-001",
                "title": "Replace this example story with the first real one",
                "description": "As a user, I want ..., so that ...",
                "acceptanceCriteria": [
                    "A specific, verifiable criterion",
                    "Typecheck passes",
                    "Unit tests pass",
                ],
                "priority": 1,
                "passes": False,
                "notes": "",
            }
        ],
    }
