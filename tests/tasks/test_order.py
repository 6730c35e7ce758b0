"""The shared task-order rules: next task with dependencies, cycles, unknown ids, and --resume-from."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskView
from ralphloop.tasks.focus import OneTask, ResumeFrom
from ralphloop.tasks.order import dependency_cycle, pick_next, unknown_dependencies, waiting_on


def task(tid: str, *deps: str, done: bool = False) -> Task:
    return Task(tid, f"title {tid}", done, depends_on=deps)


def test_next_is_the_first_ready_task_in_work_order() -> None:
    tasks = [task("a", "c"), task("b", done=True), task("c", "b"), task("d")]
    chosen = pick_next(tasks)
    assert chosen is not None and chosen.id == "c"  # a waits for c; c's dependency b is done


def test_nothing_is_next_when_everything_is_done_or_waiting() -> None:
    assert pick_next([task("a", done=True)]) is None
    assert pick_next([task("a", "b"), task("b", "a")]) is None


def test_done_ids_from_outside_the_list_count() -> None:
    chosen = pick_next([task("b", "a")], done={"a"})
    assert chosen is not None and chosen.id == "b"


def test_cycle_is_reported_as_a_path() -> None:
    assert dependency_cycle([task("a", "b"), task("b", "c"), task("c", "a")]) == ["a", "b", "c", "a"]
    assert dependency_cycle([task("a", "a")]) == ["a", "a"]
    assert dependency_cycle([task("a", "b"), task("b"), task("c", "a", "b")]) is None


def test_unknown_dependencies_and_waiting_on() -> None:
    tasks = [task("a", "zz"), task("b", "a")]
    assert [(item.id, dep) for item, dep in unknown_dependencies(tasks)] == [("a", "zz")]
    assert waiting_on(tasks[1], tasks) == ["a"]


@given(st.lists(st.lists(st.integers(0, 7), max_size=3), min_size=1, max_size=8))
def test_a_reported_cycle_is_real_and_none_means_an_order_exists(edges: list[list[int]]) -> None:
    tasks = [task(str(n), *(str(dep) for dep in deps if dep < len(edges))) for n, deps in enumerate(edges)]
    cycle = dependency_cycle(tasks)
    by_id = {item.id: item for item in tasks}
    if cycle is not None:
        assert cycle[0] == cycle[-1]
        assert all(after in by_id[before].depends_on for before, after in pairwise(cycle))
    else:  # no cycle: doing the next task over and over finishes them all
        remaining = list(tasks)
        for _ in tasks:
            chosen = pick_next(remaining)
            assert chosen is not None
            remaining = [
                item if item.id != chosen.id else task(item.id, *item.depends_on, done=True) for item in remaining
            ]
        assert all(item.done for item in remaining)


class Fixed:
    """A task source over a fixed list (the wrappers' input)."""

    kind = "todo"
    path = "plans/x/TODO.md"
    marks_done = False

    def __init__(self, tasks: list[Task]) -> None:
        self.tasks = tuple(tasks)

    def load(self) -> TaskView:
        return TaskView(self.tasks, pick_next(self.tasks))

    def describe(self, item: Task) -> str:
        return item.id

    def mark_done(self, item: Task, when: str) -> list[str]:
        return []


def test_resume_from_skips_the_earlier_tasks() -> None:
    view = ResumeFrom(Fixed([task("a"), task("b"), task("c", "b")]), "b").load()
    assert [item.id for item in view.tasks] == ["b", "c"]
    assert view.next_task is not None and view.next_task.id == "b"


def test_resume_from_a_done_dependency_before_the_point_is_fine() -> None:
    view = ResumeFrom(Fixed([task("a", done=True), task("b", "a")]), "b").load()
    assert view.next_task is not None and view.next_task.id == "b"


def test_resume_from_blames_the_skipped_unfinished_dependency() -> None:
    source = Fixed([task("2.1"), task("3.1", "3.2"), task("3.2", "2.1")])
    with pytest.raises(RalphError) as caught:
        ResumeFrom(source, "3.1").load()
    assert "story 3.2 depends on 2.1, which --resume-from skips" in str(caught.value)


def test_unknown_ids_are_errors_listing_the_known_ones() -> None:
    for wrapper in (ResumeFrom, OneTask):
        with pytest.raises(RalphError) as caught:
            wrapper(Fixed([task("a"), task("b")]), "z").load()
        assert "z: no such story" in str(caught.value) and "a, b" in str(caught.value)


def test_one_task_ignores_dependencies() -> None:
    view = OneTask(Fixed([task("a"), task("b", "a")]), "b").load()
    assert view.next_task is not None and view.next_task.id == "b"
