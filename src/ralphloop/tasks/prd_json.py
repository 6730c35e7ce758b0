"""prd.json (seed 003): user stories with `passes`, worked highest priority (1) first."""

from __future__ import annotations

import json
import os

import msgspec

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskView
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.prd_reading import STORIES, PrdReading, read_prd
from ralphloop.tasks.problems import Problem, raise_first, validate_in


class PrdStory(msgspec.Struct, rename="camel"):
    """One user story, as prd_reading.read_prd puts it (a priority as a number: 1 = highest); unknown fields are
    kept on disk and ignored here."""

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


def parse_prd(raw: bytes, label: str, validate: str | None = None) -> Prd:
    """prd.json's bytes read as ralph reads them (tasks/prd_reading.py); RalphError with the first problem `ralph
    validate` lists, at `label` and its line (and `validate`, the command that lists them all, when given)."""
    return read_checked(raw, label, validate)[0]


def read_checked(raw: bytes, label: str, validate: str | None = None) -> tuple[Prd, PrdReading]:
    """The file as a Prd, and the reading it came from (where its stories are, their priorities as written)."""
    reading = read_prd(raw)
    raise_first(problems_of(reading, label), validate)
    assert reading.prd is not None  # no flaw: read
    return msgspec.convert(reading.prd, Prd), reading


def prd_problems(raw: bytes, label: str) -> list[Problem]:
    """Every problem of a prd.json, each at `label` and its line (what `ralph validate` lists)."""
    return problems_of(read_prd(raw), label)


def problems_of(reading: PrdReading, label: str) -> list[Problem]:
    return [Problem(label, flaw.message, flaw.line) for flaw in reading.flaws]


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
        self._reading: PrdReading | None = None  # the last read: how the file writes what describe() repeats

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
        prd, self._reading = read_checked(raw, self.display, validate_in(os.path.dirname(self.display) or "."))
        return prd

    def mark_done(self, task: Task, when: str) -> list[str]:
        return []

    def describe(self, task: Task) -> str:
        reading = self._reading
        written = reading.priorities.get(task.id, "") if reading else str(task.priority)
        key = reading.key if reading else STORIES
        # the file's own words: its priority label, the array its stories are in (the agent edits it as it is)
        where = "" if key == STORIES else f' (its "{key}" array)' if key else " (the array it holds)"
        lines = [
            f"## Current story: {task.id} - {task.title}",
            "",
            f"{f'Priority {written}. ' if written else ''}When it is done and its checks pass, set "
            f'`"passes": true` for {task.id} in {self.display}{where}.',
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


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> PrdSource:
    """The format registry's opener (plugins/formats.py)."""
    return PrdSource(paths.prd, display_path(paths.prd, os.getcwd()))


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format prd` writes (the default format)."""
    from ralphloop.templates.prompt import default_template

    prd = json.dumps(new_prd(name, created), indent=2) + "\n"
    return {"prd.json": prd, "prompt.md": default_template("prd"), "specs/.gitkeep": ""}
