"""Every story spec of a workspace, read and checked: the work order, and every problem with its place."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from msgspec import Struct

from ralphloop.core.protocols import Task
from ralphloop.tasks import order
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.stories.files import STORY_ID, find_spec_files
from ralphloop.tasks.stories.spec import StorySpec, read_spec


class StoryScan(Struct, frozen=True):
    """Everything found under specs/: the stories in work order, and every problem with them."""

    stories: tuple[StorySpec, ...]  # in work order (story_order, else natural order)
    every: dict[str, StorySpec]  # every spec found, by id, listed in story_order or not
    problems: tuple[Problem, ...]
    unlisted: tuple[str, ...] = ()  # spec ids that story_order leaves out (natural order)


def natural_key(story_id: str) -> tuple[tuple[int, ...], str]:
    """1.2 < 1.10 < 2.1: the numeric parts compared as numbers; the text breaks ties (1.1 vs 01.1)."""
    return tuple(int(part) for part in story_id.split(".")), story_id


def _unique(specs: list[StorySpec]) -> tuple[dict[str, StorySpec], list[Problem]]:
    """The specs by id; a second file with the same id is a problem naming both (the first is kept)."""
    by_id: dict[str, StorySpec] = {}
    problems = []
    for spec in specs:
        if spec.id in by_id:
            problems.append(Problem(spec.shown, f"story {spec.id} is also in {by_id[spec.id].shown}"))
        else:
            by_id[spec.id] = spec
    return by_id, problems


def work_order(
    by_id: dict[str, StorySpec], story_order: Sequence[str] | None, display: str
) -> tuple[list[StorySpec], list[Problem]]:
    """The stories in the order they are worked on: story_order when given, else natural order."""
    if story_order is None:
        return sorted(by_id.values(), key=lambda spec: natural_key(spec.id)), []
    ordered: list[StorySpec] = []
    problems = []
    for story_id in story_order:
        if story_id in by_id:
            if by_id[story_id] not in ordered:
                ordered.append(by_id[story_id])
        elif STORY_ID.fullmatch(story_id):
            epic = story_id.split(".")[0]
            message = f"story_order names {story_id} but specs/epic-{epic}/story-{story_id}-*.md does not exist"
            problems.append(Problem(display, message))
        else:
            problems.append(Problem(display, f"story_order names {story_id!r}, which is not a story id (N.M)"))
    return ordered, problems


def as_task(spec: StorySpec, done: bool = False) -> Task:
    """The spec as the loop's Task; done when the spec says so or `done`."""
    return Task(
        id=spec.id,
        title=spec.title,
        done=done or spec.done,
        priority=spec.priority,
        description=spec.shown,
        depends_on=spec.depends_on,
    )


def dependency_problems(specs: Collection[StorySpec]) -> list[Problem]:
    """depends_on naming no spec at all, and one dependency cycle, each at its depends_on line."""
    tasks = [as_task(spec) for spec in specs]
    by_id = {spec.id: spec for spec in specs}
    problems = []
    for task, dep in order.unknown_dependencies(tasks):
        spec = by_id[task.id]
        where = f"specs/epic-{dep.split('.')[0]}/story-{dep}-*.md"
        problems.append(
            Problem(spec.shown, f"depends_on names {dep}, but there is no {where}", spec.dependency_line(dep))
        )
    # Unknown ids cannot be part of a cycle: the check sees only the known ones.
    cycle = order.dependency_cycle(tasks)
    if cycle:
        first = by_id[cycle[0]]
        message = f"depends_on makes a cycle: {' → '.join(cycle)} (none of them could ever start)"
        problems.append(Problem(first.shown, message, first.dependency_line(cycle[1])))
    return problems


def scan_stories(folder: str, display: str, story_order: Sequence[str] | None = None) -> StoryScan:
    """Read and validate every spec under `<folder>/specs`; the problems are in file order."""
    specs_dir = os.path.join(folder, "specs")
    if not os.path.isdir(specs_dir):
        return StoryScan((), {}, (Problem(display or ".", "no specs/ folder"),))
    problems: list[Problem] = []
    specs: list[StorySpec] = []
    for found in find_spec_files(specs_dir):
        spec, found_problems = read_spec(found, display)
        specs.append(spec)
        problems += found_problems
    if not specs:
        return StoryScan((), {}, (Problem(display or ".", "no story specs (specs/epic-N/story-N.M-slug.md)"),))
    by_id, twice = _unique(specs)
    ordered, order_problems = work_order(by_id, story_order, display or ".")
    # Dependencies are checked among every spec: a story may depend on one that story_order leaves out.
    problems += twice + order_problems + dependency_problems(list(by_id.values()))
    listed = {spec.id for spec in ordered}
    unlisted = tuple(sorted((sid for sid in by_id if sid not in listed), key=natural_key))
    return StoryScan(tuple(ordered), by_id, tuple(problems), unlisted)


def story_problems(folder: str, display: str, story_order: Sequence[str] | None = None) -> list[Problem]:
    """Every problem with the specs, for `ralph validate`."""
    return list(scan_stories(folder, display, story_order).problems)
