"""tasks/stories/: seed 002 story specs, their order, dependencies, validation, done-ness and marking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task
from ralphloop.tasks.stories import marking
from ralphloop.tasks.stories.example import new_story_spec
from ralphloop.tasks.stories.recorded import completed_from_progress
from ralphloop.tasks.stories.scan import natural_key, scan_stories, story_problems
from ralphloop.tasks.stories.source import StorySource

DISPLAY = "ws"


def spec_text(status: str = "pending", depends_on: str = "[]", title: str | None = None, extra: str = "") -> str:
    heading = f"# {title}\n\nBody text.\n" if title else "Body without a heading.\n"
    return f"---\nstatus: {status}\npriority: high\ndepends_on: {depends_on}\n{extra}---\n\n{heading}"


def write(root: Path, rel: str, text: str) -> Path:
    path = root / "specs" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def story(root: Path, sid: str, slug: str = "some-story", **kwargs: str) -> Path:
    epic = sid.split(".", maxsplit=1)[0]
    name = f"story-{sid}-{slug}.md" if slug else f"story-{sid}.md"
    return write(root, f"epic-{epic}/{name}", spec_text(**kwargs))


def source(root: Path, story_order: list[str] | None = None, resume_from: str | None = None) -> StorySource:
    state, progress = str(root / "state.json"), str(root / "progress.txt")
    return StorySource(str(root), DISPLAY, state, progress, story_order=story_order, resume_from=resume_from)


def next_id(src: StorySource) -> str | None:
    upcoming = src.load().next_task
    return upcoming.id if upcoming else None


def ids(tasks: tuple[Task, ...]) -> list[str]:
    return [task.id for task in tasks]


def problems_of(root: Path, story_order: list[str] | None = None) -> list[str]:
    return [str(problem) for problem in story_problems(str(root), DISPLAY, story_order)]


def load_error(src: StorySource) -> str:
    with pytest.raises(RalphError) as caught:
        src.load()
    return str(caught.value)


# ---------------------------------------------------------------- finding and ordering


def test_natural_order_puts_1_2_before_1_10(tmp_path: Path) -> None:
    for sid in ("1.10", "2.1", "1.2", "1.1", "10.1"):
        story(tmp_path, sid)
    view = source(tmp_path).load()
    assert ids(view.tasks) == ["1.1", "1.2", "1.10", "2.1", "10.1"]
    assert view.next_task is not None and view.next_task.id == "1.1"
    assert natural_key("1.2") < natural_key("1.10") < natural_key("2.1")


def test_ids_are_kept_as_written_in_the_file_name(tmp_path: Path) -> None:
    story(tmp_path, "1.10", slug="")
    story(tmp_path, "8.3", slug="payment-refunds")
    view = source(tmp_path).load()
    assert ids(view.tasks) == ["1.10", "8.3"]
    assert [task.title for task in view.tasks] == ["Story 1.10", "Payment refunds"]  # no heading: the slug
    assert view.tasks[1].description == "ws/specs/epic-8/story-8.3-payment-refunds.md"
    assert view.tasks[1].line == 0


def test_files_that_are_not_story_specs_are_ignored(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    write(tmp_path, "epic-1/notes.md", "# notes\n")
    write(tmp_path, "epic-1/story-1.md", "no frontmatter\n")
    write(tmp_path, "epic-1/story-1.2.3.md", "no frontmatter\n")
    write(tmp_path, "epic-1/deeper/story-1.4-x.md", "no frontmatter\n")
    write(tmp_path, "story-1.5-top.md", "no frontmatter\n")
    write(tmp_path, "epic-x/story-1.6-x.md", "no frontmatter\n")
    assert problems_of(tmp_path) == []
    assert ids(source(tmp_path).load().tasks) == ["1.1"]


def test_title_comes_from_the_first_heading_outside_code(tmp_path: Path) -> None:
    write(
        tmp_path,
        "epic-2/story-2.1-x.md",
        "---\nstatus: pending\n---\n```sh\n# not a title\n```\n# Story 2.1: Refunds\n",
    )
    story(tmp_path, "2.2", title="Export to CSV ##")
    view = source(tmp_path).load()
    assert [task.title for task in view.tasks] == ["Refunds", "Export to CSV"]


def test_story_order_wins_and_leaves_out_the_others(tmp_path: Path) -> None:
    for sid in ("1.1", "1.2", "2.1"):
        story(tmp_path, sid)
    view = source(tmp_path, story_order=["2.1", "1.1"]).load()
    assert ids(view.tasks) == ["2.1", "1.1"]
    assert view.next_task is not None and view.next_task.id == "2.1"
    scan = scan_stories(str(tmp_path), DISPLAY, ["2.1", "1.1"])
    assert scan.unlisted == ("1.2",)
    assert scan.problems == ()  # a spec left out of story_order is not a problem


def test_story_order_naming_a_missing_spec_is_a_problem(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    assert problems_of(tmp_path, ["1.1", "4.2"]) == [
        "ws: story_order names 4.2 but specs/epic-4/story-4.2-*.md does not exist"
    ]
    assert "story_order names 4.2" in load_error(source(tmp_path, story_order=["1.1", "4.2"]))


def test_no_specs_folder(tmp_path: Path) -> None:
    assert problems_of(tmp_path) == ["ws: no specs/ folder"]
    assert load_error(source(tmp_path)) == "ws: no specs/ folder"


def test_no_story_file(tmp_path: Path) -> None:
    write(tmp_path, "epic-1/readme.md", "x")
    assert problems_of(tmp_path) == ["ws: no story specs (specs/epic-N/story-N.M-slug.md)"]


def test_epic_folder_must_match_the_story_id(tmp_path: Path) -> None:
    write(tmp_path, "epic-2/story-3.1-x.md", spec_text())
    assert problems_of(tmp_path) == ["ws/specs/epic-2/story-3.1-x.md: story 3.1 is in epic-2/ (move it to epic-3/)"]


def test_two_files_with_one_id_name_both(tmp_path: Path) -> None:
    story(tmp_path, "1.1", slug="first")
    story(tmp_path, "1.1", slug="second")
    assert problems_of(tmp_path) == [
        "ws/specs/epic-1/story-1.1-second.md: story 1.1 is also in ws/specs/epic-1/story-1.1-first.md"
    ]
    with pytest.raises(RalphError, match=r"story 1\.1 is also in"):
        source(tmp_path).load()


# ---------------------------------------------------------------- frontmatter validation


def test_every_frontmatter_problem_is_reported_with_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "epic-1/story-1.1-a.md", "---\nstatus: pending\ndepends_on: [1.1\n---\n")
    write(tmp_path, "epic-1/story-1.2-b.md", "---\npriority: 2\nstatus: finished\n---\n")
    write(tmp_path, "epic-1/story-1.3-c.md", "---\nstatus: done\npriority: urgent\n---\n")
    write(tmp_path, "epic-1/story-1.4-d.md", "# Just markdown\n")
    write(tmp_path, "epic-1/story-1.5-e.md", "---\nstatus: pending\n# never closed\n")
    write(tmp_path, "epic-1/story-1.6-f.md", "---\nestimation: [1, 2]\ndepends_on: {a: 1}\nfrs: [[x]]\n---\n")
    problems = story_problems(str(tmp_path), DISPLAY, None)
    where = [(problem.path.rsplit("/", 1)[1], problem.line) for problem in problems]
    assert where == [
        ("story-1.1-a.md", 4),
        ("story-1.2-b.md", 3),
        ("story-1.3-c.md", 3),
        ("story-1.4-d.md", 1),
        ("story-1.5-e.md", 1),
        ("story-1.6-f.md", 2),
        ("story-1.6-f.md", 3),
        ("story-1.6-f.md", 4),
    ]
    messages = [problem.message for problem in problems]
    assert messages[0].startswith("invalid YAML in the frontmatter")
    assert messages[1].startswith("status: 'finished' is not one of pending, ready, in-progress")
    assert messages[2].startswith("priority: 'urgent' is not a whole number, P0..P4")
    assert messages[3] == "no YAML frontmatter (--- ... ---) at the top"
    assert "no closing ---" in messages[4]
    assert messages[5].startswith("estimation:")
    assert messages[6].startswith("depends_on:")
    assert messages[7].startswith("frs:")
    # load() raises the first, saying how many more there are.
    assert load_error(source(tmp_path)).startswith("ws/specs/epic-1/story-1.1-a.md:4: invalid YAML")
    assert "(and 7 more problems" in load_error(source(tmp_path))


@pytest.mark.parametrize("value", ["3", "P0", "p4", "HIGH", "medium", "low", "critical"])
def test_accepted_priorities(tmp_path: Path, value: str) -> None:
    write(tmp_path, "epic-1/story-1.1-a.md", f"---\npriority: {value}\n---\n")
    assert problems_of(tmp_path) == []


@pytest.mark.parametrize("value", ["P5", "-1", "1.5", "urgent", "[1]"])
def test_refused_priorities(tmp_path: Path, value: str) -> None:
    write(tmp_path, "epic-1/story-1.1-a.md", f"---\npriority: {value}\n---\n")
    assert [problem.line for problem in story_problems(str(tmp_path), DISPLAY)] == [2]


@pytest.mark.parametrize("value", ["pending", "Ready", "IN-PROGRESS", "in_progress", "review", "blocked", "Done"])
def test_accepted_statuses(tmp_path: Path, value: str) -> None:
    write(tmp_path, "epic-1/story-1.1-a.md", f"---\nstatus: {value}\n---\n")
    assert problems_of(tmp_path) == []


def test_missing_status_is_pending_and_unknown_keys_are_allowed(tmp_path: Path) -> None:
    write(tmp_path, "epic-1/story-1.1-a.md", "---\nowner: ana\nestimation: 3\nfrs: FR-1\n---\n# A\n")
    view = source(tmp_path).load()
    assert not view.tasks[0].done
    assert view.next_task == view.tasks[0]


def test_depends_on_as_a_single_id_and_as_an_empty_value(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    story(tmp_path, "1.2", depends_on="1.1")
    story(tmp_path, "1.3", depends_on="")
    view = source(tmp_path).load()
    assert [task.depends_on for task in view.tasks] == [(), ("1.1",), ()]


def test_depends_on_item_that_is_not_an_id_is_a_problem_at_its_line(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    write(tmp_path, "epic-1/story-1.2-x.md", '---\ndepends_on:\n  - 1.1\n  - "Story 1.1"\n---\n')
    problems = story_problems(str(tmp_path), DISPLAY)
    assert [(problem.line, problem.message.split(" is ")[0]) for problem in problems] == [
        (4, "depends_on: 'Story 1.1'")
    ]


# ---------------------------------------------------------------- dependencies


def test_depends_on_makes_an_earlier_story_wait(tmp_path: Path) -> None:
    story(tmp_path, "1.1", depends_on="[1.10]")
    story(tmp_path, "1.2")
    story(tmp_path, "1.10")
    view = source(tmp_path).load()
    assert view.tasks[0].depends_on == ("1.10",)  # "1.10", not the float 1.1
    assert view.next_task is not None and view.next_task.id == "1.2"
    story(tmp_path, "1.2", status="done")
    assert next_id(source(tmp_path)) == "1.10"
    story(tmp_path, "1.10", status="done")
    assert next_id(source(tmp_path)) == "1.1"


def test_unknown_dependency_is_a_problem_at_its_line(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    write(tmp_path, "epic-1/story-1.2-x.md", "---\nstatus: pending\ndepends_on:\n  - 1.1\n  - 9.9\n---\n")
    assert problems_of(tmp_path) == [
        "ws/specs/epic-1/story-1.2-x.md:5: depends_on names 9.9, but there is no specs/epic-9/story-9.9-*.md"
    ]


def test_a_dependency_cycle_is_a_problem_listing_it(tmp_path: Path) -> None:
    story(tmp_path, "1.1", depends_on="[1.3]")
    story(tmp_path, "1.2", depends_on="[1.1]")
    story(tmp_path, "1.3", depends_on="[1.2]")
    story(tmp_path, "1.4")
    problems = story_problems(str(tmp_path), DISPLAY)
    assert len(problems) == 1
    assert problems[0].path == "ws/specs/epic-1/story-1.1-some-story.md"
    assert problems[0].line == 4
    assert "1.1 → 1.3 → 1.2 → 1.1" in problems[0].message


def test_a_story_depending_on_itself_is_a_cycle(tmp_path: Path) -> None:
    story(tmp_path, "1.1", depends_on="1.1")
    assert problems_of(tmp_path) == [
        "ws/specs/epic-1/story-1.1-some-story.md:4: depends_on makes a cycle: 1.1 → 1.1 (none of them could ever start)"
    ]


def test_a_dependency_left_out_by_story_order(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    story(tmp_path, "2.1", depends_on="[1.1]")
    assert "story 2.1 depends on 1.1, which story_order leaves out and is not done" in load_error(
        source(tmp_path, story_order=["2.1"])
    )
    story(tmp_path, "1.1", status="done")
    view = source(tmp_path, story_order=["2.1"]).load()
    assert view.next_task is not None and view.next_task.id == "2.1"


# ---------------------------------------------------------------- resume_from


def test_resume_from_leaves_the_earlier_stories_out(tmp_path: Path) -> None:
    for sid in ("1.1", "1.2", "2.1", "2.2"):
        story(tmp_path, sid)
    view = source(tmp_path, resume_from="2.1").load()
    assert ids(view.tasks) == ["2.1", "2.2"]
    assert view.next_task is not None and view.next_task.id == "2.1"


def test_resume_from_an_unknown_story(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    story(tmp_path, "1.2")
    assert (
        load_error(source(tmp_path, resume_from="9.9"))
        == "--resume-from 9.9: no such story in ws/specs (stories: 1.1, 1.2)"
    )


def test_resume_from_skipping_an_unfinished_dependency(tmp_path: Path) -> None:
    story(tmp_path, "2.1")
    story(tmp_path, "3.1")
    story(tmp_path, "3.2", depends_on="[2.1]")
    story(tmp_path, "3.1", status="done")
    message = load_error(source(tmp_path, resume_from="3.1"))
    assert message == "story 3.2 depends on 2.1, which --resume-from 3.1 skips and is not done"
    # Once 2.1 is done the skipped dependency is met.
    story(tmp_path, "2.1", status="done")
    view = source(tmp_path, resume_from="3.1").load()
    assert view.next_task is not None and view.next_task.id == "3.2"
    assert view.next_task.depends_on == ()


def test_resume_from_with_a_skipped_dependency_still_runs_what_can_run(tmp_path: Path) -> None:
    story(tmp_path, "2.1")
    story(tmp_path, "3.1", depends_on="[2.1]")
    story(tmp_path, "3.2")
    view = source(tmp_path, resume_from="3.1").load()
    assert view.next_task is not None and view.next_task.id == "3.2"


# ---------------------------------------------------------------- done-ness


def test_done_from_the_frontmatter(tmp_path: Path) -> None:
    story(tmp_path, "1.1", status="Done")
    story(tmp_path, "1.2")
    view = source(tmp_path).load()
    assert view.done_ids == frozenset({"1.1"})
    assert view.next_task is not None and view.next_task.id == "1.2"


@pytest.mark.parametrize("key", ["completed_stories", "completed_ids"])
def test_done_from_state_json(tmp_path: Path, key: str) -> None:
    story(tmp_path, "1.1")
    story(tmp_path, "1.2")
    (tmp_path / "state.json").write_text(json.dumps({key: ["1.1"], "current_story": None}))
    view = source(tmp_path).load()
    assert view.done_ids == frozenset({"1.1"})


def test_done_from_progress_only_without_state_json(tmp_path: Path) -> None:
    story(tmp_path, "1.1")
    story(tmp_path, "1.2")
    story(tmp_path, "8.3")
    (tmp_path / "progress.txt").write_text(
        "# log\n[DONE] Story 8.3 - Refunds - 2026-01-30T10:00:00Z\nnote: [DONE] Story 1.1 - A - t\n"
        "[FAIL] Story 1.2 - broke - t (attempt 1/3)\n[DONE] Story 8.3 - again\n[DONE] Story 1.20 - other\n"
    )
    assert completed_from_progress(str(tmp_path / "progress.txt")) == ["8.3", "1.1", "1.20"]
    assert source(tmp_path).load().done_ids == frozenset({"8.3", "1.1"})
    (tmp_path / "state.json").write_text(json.dumps({"completed_stories": ["1.2"]}))
    assert source(tmp_path).load().done_ids == frozenset({"1.2"})


def test_completed_from_a_missing_progress_file(tmp_path: Path) -> None:
    assert completed_from_progress(str(tmp_path / "nope.txt")) == []


def test_all_done(tmp_path: Path) -> None:
    story(tmp_path, "1.1", status="done")
    view = source(tmp_path).load()
    assert view.all_done
    assert view.next_task is None


# ---------------------------------------------------------------- describe


def test_describe_embeds_the_whole_spec(tmp_path: Path) -> None:
    body = "\n".join(f"- acceptance criterion {n}" for n in range(5000))  # large: no size limit
    text = f"---\nstatus: pending\npriority: P1\nfrs: [FR-7]\n---\n\n# Refunds\n\n{body}\n"
    write(tmp_path, "epic-8/story-8.3-refunds.md", text)
    src = source(tmp_path)
    task = src.load().tasks[0]
    prompt = src.describe(task)
    assert prompt.startswith("## STORY SPECIFICATION: Story 8.3 — Refunds (ws/specs/epic-8/story-8.3-refunds.md)")
    assert text.rstrip("\n") in prompt
    assert "<ralph>DONE 8.3</ralph>" in prompt
    assert "<ralph>FAIL 8.3: reason</ralph>" in prompt
    assert "<ralph>LEARN: insight</ralph>" in prompt


def test_describe_reads_the_file_at_describe_time(tmp_path: Path) -> None:
    path = story(tmp_path, "1.1", title="A")
    src = source(tmp_path)
    task = src.load().tasks[0]
    path.write_text(spec_text(title="A") + "\nAdded after load.\n")
    assert "Added after load." in src.describe(task)


# ---------------------------------------------------------------- mark_done


def test_mark_done_rewrites_only_the_status_and_appends_done(tmp_path: Path) -> None:
    text = "\r\n".join(["---", "status: pending # set by ralph", "priority: high", "depends_on: []", "---"])
    text += "\r\n# Refunds\r\nstatus: pending\r\n"
    path = write(tmp_path, "epic-8/story-8.3-refunds.md", text)
    (tmp_path / "progress.txt").write_bytes(b"# Progress\nno newline at the end")
    src = source(tmp_path)
    task = src.load().tasks[0]
    notes = src.mark_done(task, "2026-01-30T10:00:00Z")
    assert notes == ["ws/specs/epic-8/story-8.3-refunds.md: status: pending → done"]
    after = path.read_bytes()
    assert after == text.encode().replace(b"status: pending #", b"status: done #", 1)
    assert after.count(b"\r\n") == text.count("\r\n")  # still CRLF throughout
    assert (tmp_path / "progress.txt").read_text() == (
        "# Progress\nno newline at the end\n[DONE] Story 8.3 - Refunds - 2026-01-30T10:00:00Z\n"
    )
    view = src.load()
    assert view.all_done
    # The rebuild reads the line just written.
    assert completed_from_progress(str(tmp_path / "progress.txt")) == ["8.3"]


def test_mark_done_adds_a_missing_status_and_keeps_a_byte_order_mark(tmp_path: Path) -> None:
    path = write(tmp_path, "epic-1/story-1.1-x.md", "\ufeff---\npriority: low\n---\n# X\n")
    src = source(tmp_path)
    notes = src.mark_done(src.load().tasks[0], "t")
    assert path.read_bytes() == "\ufeff---\npriority: low\nstatus: done\n---\n# X\n".encode()
    assert notes == ["ws/specs/epic-1/story-1.1-x.md: status: (none) → done"]


def test_mark_done_when_the_spec_cannot_be_written_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = story(tmp_path, "1.1")
    story(tmp_path, "1.2")
    before = path.read_bytes()
    src = source(tmp_path)
    task = src.load().tasks[0]

    def refuse(target: str, data: bytes) -> None:
        raise PermissionError(13, "Permission denied", target)

    monkeypatch.setattr(marking, "atomic_write_bytes", refuse)
    notes = src.mark_done(task, "t")
    assert notes == ["ws/specs/epic-1/story-1.1-some-story.md: could not set status: done (Permission denied)"]
    assert path.read_bytes() == before
    (tmp_path / "progress.txt").unlink()  # and no progress line to fall back on either
    (tmp_path / "state.json").write_text("{}")
    view = src.load()
    assert view.done_ids == frozenset({"1.1"})
    assert view.next_task is not None and view.next_task.id == "1.2"
    assert not source(tmp_path).load().tasks[0].done  # only the source that marked it remembers


def test_mark_done_of_a_spec_that_vanished_returns_a_note(tmp_path: Path) -> None:
    path = story(tmp_path, "1.1")
    src = source(tmp_path)
    task = src.load().tasks[0]
    path.unlink()
    notes = src.mark_done(task, "t")
    assert len(notes) == 1
    assert "1.1" in notes[0]
    assert "[DONE] Story 1.1" in (tmp_path / "progress.txt").read_text()


def test_mark_done_twice_writes_no_second_status_change(tmp_path: Path) -> None:
    path = story(tmp_path, "1.1", status="done")
    before = path.read_bytes()
    src = source(tmp_path)
    assert src.mark_done(src.load().tasks[0], "t") == []
    assert path.read_bytes() == before


# ---------------------------------------------------------------- init's example spec


def test_the_example_spec_is_valid(tmp_path: Path) -> None:
    write(tmp_path, "epic-1/story-1.1-first-story.md", new_story_spec())
    assert story_problems(str(tmp_path), DISPLAY) == []
    view = source(tmp_path).load()
    assert view.tasks[0].title == "Replace this example story with the first real one"
    assert view.next_task == view.tasks[0]
