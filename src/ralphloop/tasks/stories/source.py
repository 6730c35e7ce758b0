"""The story task source: specs worked in natural (or story_order) order, dependencies first; a
finished story is marked done by ralph."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from msgspec.structs import replace

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskView
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks import order
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.problems import Problem, from_error, raise_first, validate_in
from ralphloop.tasks.stories.files import shown_path
from ralphloop.tasks.stories.marking import append_line, write_status
from ralphloop.tasks.stories.recorded import recorded_done
from ralphloop.tasks.stories.scan import StoryScan, as_task, scan_stories
from ralphloop.tasks.stories.spec import StorySpec

LISTED_IN_ERRORS = 20


def _blocked_message(task: Task, outside: dict[str, str], done: Collection[str]) -> str | None:
    for dep in task.depends_on:
        if dep in outside and dep not in done:
            return f"story {task.id} depends on {dep}, which {outside[dep]} and is not done"
    return None


class StorySource(SourceBase):
    """Story specs under `<folder>/specs`, worked in natural (or story_order) order, dependencies first."""

    kind = "stories"
    marks_done = True

    def __init__(
        self,
        folder: str,
        display: str,
        state_path: str,
        progress_path: str,
        story_order: Sequence[str] | None = None,
        resume_from: str | None = None,
    ) -> None:
        self.folder = folder
        self.display = display or "."
        self.path = shown_path(display, "specs")
        self.state_path = state_path
        self.progress_path = progress_path
        self.story_order = tuple(story_order) if story_order is not None else None
        self.resume_from = resume_from
        # Marked done in this process: a later load() says so even when writing the spec failed.
        self._marked: set[str] = set()
        self._specs: dict[str, StorySpec] = {}
        self._open_before: dict[str, str] = {}  # each open story's status when the iteration began

    def begin(self, number: int, max_iterations: int | None, now: str) -> None:
        self._open_before = {spec.id: spec.status for spec in self.scan().every.values() if not spec.done}

    def after_agent(self) -> list[str]:
        """A story the agent set `status: done` in itself is put back: seed 002's ralph marks a story done on
        its DONE signal (and checks), never on the agent's edit; settle() marks it when that is earned."""
        notes: list[str] = []
        for spec in self.scan().every.values():
            old = self._open_before.get(spec.id)
            if spec.done and old is not None and spec.id not in self._marked:
                failed = [note for note in write_status(spec, old) if "could not" in note]
                notes += failed or [f"the agent set {spec.shown} done itself: put back to {old} (DONE {spec.id} says)"]
        return notes

    def scan(self) -> StoryScan:
        scan = scan_stories(self.folder, self.display, self.story_order)
        self._specs = scan.every
        return scan

    def load(self) -> TaskView:
        scan = self.scan()
        raise_first(scan.problems, validate_in(self.display))
        ordered, outside, done = self._narrow(scan)
        tasks = tuple(self._task(spec, done, outside) for spec in ordered)
        upcoming = order.pick_next(tasks)
        if upcoming is None:
            for task in tasks:
                message = None if task.done else _blocked_message(task, outside, done)
                if message:
                    raise RalphError(message)
        return TaskView(tasks=tasks, next_task=upcoming)

    def problems(self) -> list[Problem]:
        """Everything `load` refuses, each problem at its place, from one scan: the specs' problems; else
        an unknown --resume-from; else each story of the run that waits on a story outside it (left out
        by story_order, skipped by --resume-from) that is not done, where `load` would stop the run,
        maybe only after other stories."""
        scan = self.scan()
        if scan.problems:
            return list(scan.problems)
        try:
            ordered, outside, done = self._narrow(scan)
        except RalphError as exc:
            return [from_error(exc, self.path)]
        return [
            Problem(
                spec.shown,
                f"story {spec.id} depends on {dep}, which {outside[dep]} and is not done",
                spec.dependency_line(dep),
            )
            for spec in ordered
            if spec.id not in done
            for dep in spec.depends_on
            if dep in outside and dep not in done
        ]

    def _narrow(self, scan: StoryScan) -> tuple[list[StorySpec], dict[str, str], set[str]]:
        """The specs of this run in work order, why each story outside it is outside, and every done id."""
        done = recorded_done(self.state_path, self.progress_path) | self._marked
        done |= {spec.id for spec in scan.every.values() if spec.done}
        ordered = list(scan.stories)
        # Why each story outside the view is outside it: a dependency on one can never be met by this run.
        outside = dict.fromkeys(scan.unlisted, "story_order leaves out")
        if self.resume_from is not None:
            ids = [spec.id for spec in ordered]
            if self.resume_from not in ids:
                known = ", ".join(ids[:LISTED_IN_ERRORS]) + (", ..." if len(ids) > LISTED_IN_ERRORS else "")
                raise RalphError(
                    f"--resume-from {self.resume_from}: no such story in {self.path} (stories: {known or 'none'})"
                )
            skipped = ordered[: ids.index(self.resume_from)]
            outside |= {spec.id: f"--resume-from {self.resume_from} skips" for spec in skipped}
            ordered = ordered[len(skipped) :]
        return ordered, outside, done

    @staticmethod
    def _task(spec: StorySpec, done: Collection[str], outside: Collection[str]) -> Task:
        """A dependency outside the view that is done is met: dropped, so pick_next need not know it.
        One that is not done stays, and the story waits (load says why when nothing else can start)."""
        kept = tuple(dep for dep in spec.depends_on if dep not in outside or dep not in done)
        return replace(as_task(spec, spec.id in done), depends_on=kept)

    def _spec(self, task: Task) -> StorySpec:
        if task.id not in self._specs:
            self.scan()
        if task.id not in self._specs:
            raise RalphError(f"{self.path}: story {task.id} has no spec file any more")
        return self._specs[task.id]

    def describe(self, task: Task) -> str:
        spec = self._spec(task)
        content = (read_file(spec.path, spec.shown, cap=TASK_CAP) or b"").decode("utf-8", errors="replace")
        # One kind of line break in the prompt; nothing else of the file is changed.
        content = content.removeprefix("\ufeff").replace("\r\n", "\n")
        return "\n".join(
            [
                f"## STORY SPECIFICATION: Story {task.id} — {task.title} ({spec.shown})",
                "",
                "The whole spec file follows, frontmatter and all.",
                "",
                content.rstrip("\n"),
                "",
                "## END OF STORY SPECIFICATION",
                "",
                f"Work on story {task.id} only. When it is finished and its checks pass, end your reply with "
                f"`<ralph>DONE {task.id}</ralph>`. If you cannot finish it, end with "
                f"`<ralph>FAIL {task.id}: reason</ralph>`. For anything worth knowing in later stories, add "
                "`<ralph>LEARN: insight</ralph>`. Do not edit the spec's `status:` field: ralph marks the story "
                "done.",
            ]
        )

    def mark_done(self, task: Task, when: str) -> list[str]:
        """Set the spec's `status:` to done and append `[DONE] Story X.Y - Title - when` to progress.txt.

        Never raises: what could not be written is said in the returned notes."""
        self._marked.add(task.id)
        notes = []
        try:
            spec = self._spec(task)
        except RalphError as exc:
            notes.append(str(exc))
        else:
            notes += write_status(spec)
        try:
            append_line(self.progress_path, f"[DONE] Story {task.id} - {task.title} - {when}")
        except OSError as exc:
            notes.append(f"could not append the [DONE] line to progress.txt: {exc.strerror}")
        return notes


def open_source(
    paths: FeaturePaths, *, story_order: tuple[str, ...] | None = None, resume_from: str | None = None
) -> StorySource:
    """The format registry's opener (plugins/formats.py): story specs narrow --resume-from themselves, since they
    know which specs story_order leaves out."""
    folder = display_path(paths.dir, os.getcwd())
    return StorySource(paths.dir, folder, paths.state, paths.progress, story_order=story_order, resume_from=resume_from)


def starter(name: str, created: str) -> dict[str, str]:
    """The files `ralph init --format stories` writes."""
    from ralphloop.tasks.stories.example import new_story_spec
    from ralphloop.templates.prompt import default_template

    return {"specs/epic-1/story-1.1-first-story.md": new_story_spec(), "prompt.md": default_template("stories")}
