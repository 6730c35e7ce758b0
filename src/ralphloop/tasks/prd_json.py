"""prd.json (seed 003): user stories with `passes`, worked highest priority (1) first."""

from __future__ import annotations

import json
import os
import re

import msgspec

from ralphloop.errors import RalphError
from ralphloop.paths import FeaturePaths, display_path
from ralphloop.protocols import Task, TaskView
from ralphloop.safe_read import TASK_CAP, maybe_not_text, not_text, read_file
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.order import dependency_cycle, unknown_dependencies
from ralphloop.tasks.problems import Problem


class PrdStory(msgspec.Struct, rename="camel"):
    """One user story; unknown fields are kept on disk and ignored here."""

    id: str
    title: str
    priority: int
    passes: bool
    acceptance_criteria: list[str] = msgspec.field(default_factory=list)
    description: str = ""
    notes: str = ""
    depends_on: list[str] = msgspec.field(default_factory=list)  # ids that must pass first (dependsOn)


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
    except RecursionError:
        raise RalphError(f"{label}: invalid JSON: nested too deeply") from None
    except ValueError as exc:  # a number of 4,300+ digits
        raise RalphError(f"{label}: invalid JSON: {exc}") from None
    problem = not_text(data) if maybe_not_text(raw) else None
    if problem:  # an id, a title or a branch goes into arguments, variables and commits: NUL cannot
        raise RalphError(f"{label}: {problem}")
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
    tasks = [to_task(story) for story in prd.user_stories]
    unknown = unknown_dependencies(tasks)
    if unknown:
        task, dep = unknown[0]
        raise RalphError(f"{label}: story {task.id} dependsOn {dep!r}, which is no story's id")
    cycle = dependency_cycle(tasks)
    if cycle:
        raise RalphError(f"{label}: dependsOn goes round in a circle: {' → '.join(cycle)}")
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
    """The highest-priority story (1 = highest) that does not pass and whose dependsOn all pass; file order
    breaks ties."""
    passing = {story.id for story in stories if story.passes}
    waiting = [story for story in stories if not story.passes and passing.issuperset(story.depends_on)]
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
        depends_on=tuple(story.depends_on),
    )


class PrdSource(SourceBase):
    """The prd.json task source."""

    kind = "prd"
    marks_done = False  # the agent sets "passes": true itself

    def __init__(self, path: str, display: str | None = None) -> None:
        self.path = path
        self.display = display or path

    def load(self) -> TaskView:
        prd = self.read()
        upcoming = pick_next(prd.user_stories)
        ordered = sorted(prd.user_stories, key=lambda story: story.priority)  # work order; stable for ties
        return TaskView(
            tasks=tuple(to_task(story) for story in ordered),
            next_task=to_task(upcoming) if upcoming else None,
        )

    def read(self) -> Prd:
        """The whole file, validated (its branchName is read before the loop starts)."""
        raw = read_file(self.path, self.display, cap=TASK_CAP)
        if raw is None:
            raise RalphError(f"{self.display}: file not found")
        return parse_prd(raw, self.display)

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []

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


# ---------------------------------------------------------------- every problem at once (ralph validate)

_STORY_FIELDS: tuple[tuple[str, type | tuple[type, ...], bool], ...] = (
    ("id", str, True),
    ("title", str, True),
    ("priority", int, True),
    ("passes", bool, True),
    ("acceptanceCriteria", list, False),
    ("description", str, False),
    ("notes", str, False),
    ("dependsOn", list, False),
)


def prd_problems(raw: bytes, label: str) -> list[Problem]:
    """Every problem of a prd.json, each with its place (a JSON path; a line for syntax errors)."""
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        return [Problem(label, "not UTF-8 text")]
    except json.JSONDecodeError as exc:
        return [Problem(label, f"invalid JSON at column {exc.colno}: {exc.msg}", exc.lineno)]
    except RecursionError:
        return [Problem(label, "invalid JSON: nested too deeply")]
    except ValueError as exc:  # a number of 4,300+ digits
        return [Problem(label, f"invalid JSON: {exc}")]
    problem = not_text(data) if maybe_not_text(raw) else None
    if problem:
        return [Problem(label, problem)]
    if not isinstance(data, dict):
        return [Problem(label, "expected a JSON object with userStories at the top level")]
    stories = data.get("userStories")
    if not isinstance(stories, list):
        return [Problem(label, "userStories: " + ("missing" if stories is None else "expected an array"))]
    if not stories:
        return [Problem(label, "userStories is empty (add at least one story)")]
    problems = [
        Problem(label, f"{key}: expected a string")
        for key in _TOP_TEXT
        if key in data and not isinstance(data[key], str)
    ]
    seen: dict[str, int] = {}
    for index, story in enumerate(stories):
        where = f"userStories[{index}]"
        if not isinstance(story, dict):
            problems.append(Problem(label, f"{where}: expected an object"))
            continue
        for key, kind, required in _STORY_FIELDS:
            value = story.get(key)
            if value is None:
                if required:
                    problems.append(Problem(label, f"{where}: object missing required field {key}"))
                continue
            wrong = (isinstance(value, bool) and kind is int) or not isinstance(value, kind)
            if wrong:
                problems.append(Problem(label, f"{where}.{key}: expected {_TYPE_NAMES[kind]}"))
        criteria = story.get("acceptanceCriteria")
        if isinstance(criteria, list) and not all(isinstance(item, str) for item in criteria):
            problems.append(Problem(label, f"{where}.acceptanceCriteria: expected an array of strings"))
        needs = story.get("dependsOn")
        if isinstance(needs, list) and not all(isinstance(item, str) for item in needs):
            problems.append(Problem(label, f"{where}.dependsOn: expected an array of story ids"))
        sid = story.get("id")
        if isinstance(sid, str):
            if not sid.strip():
                problems.append(Problem(label, f"{where}.id is empty"))
            elif sid in seen:
                problems.append(Problem(label, f"{where}.id {sid!r} is used twice (also userStories[{seen[sid]}])"))
            else:
                seen[sid] = index
    if not problems:  # what only the whole file shows: a dependsOn on no story, or a circle of them
        try:
            parse_prd(raw, label)
        except RalphError as exc:
            problems.append(Problem(label, str(exc).removeprefix(f"{label}: ")))
    return problems


_TOP_TEXT = ("feature", "branchName", "description", "createdAt")
_TYPE_NAMES: dict[type | tuple[type, ...], str] = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    list: "an array",
}


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> PrdSource:
    """The format registry's opener (tasks/formats.py)."""
    return PrdSource(paths.prd, display_path(paths.prd, os.getcwd()))


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format prd` writes (the default format)."""
    from ralphloop.prompt import default_template

    prd = json.dumps(new_prd(name, created), indent=2) + "\n"
    return {"prd.json": prd, "prompt.md": default_template("prd"), "specs/.gitkeep": ""}
