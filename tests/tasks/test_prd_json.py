"""prd.json: validation errors that name the place, story order, and the prompt section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task
from ralphloop.tasks.prd_json import PrdSource, PrdStory, new_prd, parse_prd, pick_next, prd_problems
from ralphloop.tasks.priority_words import PRIORITY_FORMS

LABEL = ".ralph/feat/prd.json"


def story(sid: str, priority: int = 1, passes: bool = False, **extra: Any) -> dict[str, Any]:
    return {"id": sid, "title": f"Title {sid}", "priority": priority, "passes": passes, **extra}


def raw(body: Any) -> bytes:
    return json.dumps(body, indent=2).encode()


def error_of(data: bytes) -> str:
    with pytest.raises(RalphError) as caught:
        parse_prd(data, LABEL)
    return str(caught.value)


# ---------------------------------------------------------------- parse_prd errors


def test_invalid_json_names_line_and_column() -> None:
    data = b'{\n  "userStories": [\n    {"id": "a",,}\n  ]\n}\n'
    message = error_of(data)
    assert message.startswith(f"{LABEL}:3: invalid JSON at column 16: ")


def test_not_utf8_is_an_error_naming_the_file() -> None:
    message = error_of(b'{"userStories": "\xff\xfe"}')
    assert message.startswith(LABEL)
    assert "UTF-8" in message


def test_wrong_type_names_the_path() -> None:
    data = raw({"userStories": [story("A"), story("B", passes="no")]})
    message = error_of(data)
    assert message == f'{LABEL}:13: userStories[1].passes: expected true or false (found "no")'


def test_wrong_type_of_priority_names_the_path() -> None:
    data = raw({"userStories": [story("A", priority="urgent")]})
    message = error_of(data)
    assert message == f'{LABEL}:6: userStories[0].priority: "urgent" is not {PRIORITY_FORMS}'


def test_missing_required_field_is_named() -> None:
    broken = story("A")
    del broken["title"]
    message = error_of(raw({"userStories": [story("Z"), broken]}))
    assert message == f'{LABEL}:9: userStories[1]: no "title" (add "title")'


def test_missing_user_stories_is_named() -> None:
    message = error_of(raw({"feature": "x"}))
    assert "userStories" in message


def test_empty_user_stories_is_refused() -> None:
    message = error_of(raw({"feature": "x", "userStories": []}))
    assert message.startswith(LABEL)
    assert "userStories is empty" in message


def test_duplicate_ids_are_refused() -> None:
    message = error_of(raw({"userStories": [story("A"), story("B"), story("A", priority=2)]}))
    assert "userStories[2].id" in message
    assert "'A'" in message
    assert "twice" in message


def test_blank_id_is_refused() -> None:
    message = error_of(raw({"userStories": [story("A"), story("  ")]}))
    assert "userStories[1].id is empty" in message


@pytest.mark.parametrize(("body", "found"), [("text", "text"), (3, "a number"), (None, "null")])
def test_top_level_must_be_an_object(body: Any, found: str) -> None:
    message = error_of(raw(body))
    assert message == f'{LABEL}:1: expected a JSON object with a "userStories" array at the top level (found {found})'


def test_a_top_level_array_of_stories_is_read() -> None:
    prd = parse_prd(raw([story("A"), story("B", passes=True)]), LABEL)
    assert [(s.id, s.passes) for s in prd.user_stories] == [("A", False), ("B", True)]


# ---------------------------------------------------------------- what loads


def test_unknown_fields_are_allowed_everywhere() -> None:
    body = {
        "feature": "f",
        "owner": "someone",
        "userStories": [story("A", estimate=3, tags=["x"], dependsOn=[])],
    }
    prd = parse_prd(raw(body), LABEL)
    assert [s.id for s in prd.user_stories] == ["A"]


def test_snarktank_style_prd_with_project_instead_of_feature_loads() -> None:
    body = {
        "project": "MyApp",
        "description": "Task priority system",
        "userStories": [
            {
                "id": "US-001",
                "title": "Add priority field to database",
                "description": "As a developer, I need to store task priority.",
                "acceptanceCriteria": ["Add priority column", "Typecheck passes"],
                "priority": 1,
                "passes": False,
                "notes": "",
            }
        ],
    }
    prd = parse_prd(raw(body), LABEL)
    assert prd.feature == ""
    assert prd.branch_name == ""
    assert prd.user_stories[0].acceptance_criteria == ["Add priority column", "Typecheck passes"]
    assert prd.user_stories[0].description.startswith("As a developer")


def test_the_prd_ralph_init_writes_loads() -> None:
    prd = parse_prd(raw(new_prd("feat", "2026-01-01T00:00:00Z")), LABEL)
    assert prd.feature == "feat"
    assert prd.branch_name == "feature/feat"
    assert prd.user_stories[0].id == "STORY-001"


# ---------------------------------------------------------------- pick_next


def stories(*specs: tuple[str, int, bool]) -> list[PrdStory]:
    return [PrdStory(id=sid, title=sid, priority=priority, passes=passes) for sid, priority, passes in specs]


def test_pick_next_takes_priority_one_first() -> None:
    picked = pick_next(stories(("C", 3, False), ("A", 1, False), ("B", 2, False)))
    assert picked is not None
    assert picked.id == "A"


def test_pick_next_skips_passing_stories() -> None:
    picked = pick_next(stories(("A", 1, True), ("C", 3, False), ("B", 2, False)))
    assert picked is not None
    assert picked.id == "B"


def test_pick_next_breaks_ties_by_file_order() -> None:
    picked = pick_next(stories(("Z", 2, False), ("Y", 1, False), ("X", 1, False), ("W", 1, False)))
    assert picked is not None
    assert picked.id == "Y"


def test_pick_next_is_none_when_all_pass() -> None:
    assert pick_next(stories(("A", 1, True), ("B", 2, True))) is None


# ---------------------------------------------------------------- PrdSource


def test_load_missing_file_names_it(tmp_path: Path) -> None:
    source = PrdSource(str(tmp_path / "prd.json"), display=LABEL)
    with pytest.raises(RalphError) as caught:
        source.load()
    assert str(caught.value) == f"{LABEL}: file not found"


def test_load_invalid_file_names_its_display_path(tmp_path: Path) -> None:
    path = tmp_path / "prd.json"
    path.write_text("{")
    with pytest.raises(RalphError) as caught:
        PrdSource(str(path), display=LABEL).load()
    # with the command that lists every problem of the file (ralph validate), as every task source says it
    assert (
        str(caught.value) == f"{LABEL}:1: invalid JSON at column 2: Expecting property name enclosed in double quotes"
    )


def test_load_gives_tasks_in_work_order_and_the_next_one(tmp_path: Path) -> None:
    path = tmp_path / "prd.json"
    path.write_bytes(raw({"userStories": [story("A", 2), story("B", 1, passes=True), story("C", 1)]}))
    view = PrdSource(str(path)).load()
    # priority first (1 = highest), file order among equals: --resume-from skips by this order
    assert [task.id for task in view.tasks] == ["B", "C", "A"]
    assert view.next_task is not None
    assert view.next_task.id == "C"
    assert view.done_ids == frozenset({"B"})
    assert view.open_ids == ("C", "A")
    assert not view.all_done


def test_load_when_all_pass_has_no_next_task(tmp_path: Path) -> None:
    path = tmp_path / "prd.json"
    path.write_bytes(raw({"userStories": [story("A", passes=True)]}))
    view = PrdSource(str(path)).load()
    assert view.next_task is None
    assert view.all_done


def test_describe_holds_id_title_and_criteria() -> None:
    source = PrdSource("/x/prd.json", display=LABEL)
    task = Task(
        id="US-007",
        title="Export as CSV",
        done=False,
        priority=2,
        description="As a user I want CSV.",
        acceptance_criteria=("Header row present", "Typecheck passes"),
        notes="Use the csv module",
    )
    text = source.describe(task)
    assert "US-007" in text
    assert "Export as CSV" in text
    assert "- [ ] Header row present" in text
    assert "- [ ] Typecheck passes" in text
    assert "As a user I want CSV." in text
    assert "Use the csv module" in text
    assert LABEL in text
    assert '"passes": true' in text


def test_describe_without_criteria_has_no_criteria_heading() -> None:
    text = PrdSource("prd.json").describe(Task(id="A", title="T", done=False))
    assert "Acceptance criteria" not in text
    assert "A - T" in text


# ---------------------------------------------------------------- run and validate: one source of problems


@pytest.mark.parametrize(
    "body",
    [
        {"tasks": [story("A")]},
        {"userStories": [story("A"), {"id": "B", "title": "b", "status": "done"}, story("A")]},
        {"userStories": [story("A", dependsOn=["Z"])]},
        {"userStories": [story("A", dependsOn=["B"]), story("B", dependsOn=["A"])]},
        {"userStories": [{"id": "A", "title": "a", "prority": 2, "passes": False}]},
    ],
)
def test_the_run_tells_the_first_problem_validate_lists_in_its_words(tmp_path: Path, body: Any) -> None:
    path = tmp_path / "feat" / "prd.json"
    path.parent.mkdir()
    path.write_bytes(raw(body))
    listed = prd_problems(path.read_bytes(), LABEL)
    with pytest.raises(RalphError) as caught:
        PrdSource(str(path), display=LABEL).load()
    more = len(listed) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''}; all of them: ralph validate -f .ralph/feat)"
    assert listed and str(caught.value) == str(listed[0]) + (tail if more else "")


def test_describe_says_where_the_file_keeps_the_story_and_its_priority_as_written(tmp_path: Path) -> None:
    path = tmp_path / "prd.json"
    path.write_bytes(raw({"stories": [story("A", priority="HIGH"), {"id": "B", "title": "b", "passes": False}]}))
    source = PrdSource(str(path), display=LABEL)
    view = source.load()
    first, second = view.tasks
    assert source.describe(first).splitlines()[2] == (
        f'Priority HIGH. When it is done and its checks pass, set `"passes": true` for A in {LABEL} '
        '(its "stories" array).'
    )
    # no priority written: none is told (the file's order is the story's place)
    assert source.describe(second).splitlines()[2].startswith('When it is done and its checks pass, set `"passes"')
    path.write_bytes(raw([story("A")]))
    source.load()
    assert source.describe(first).splitlines()[2].endswith(f"for A in {LABEL} (the array it holds).")
