"""prd.json as real users write it (tests/fixtures/wild/prd/, and small inline files): what ralph reads as meant,
and what it refuses, with the line of the key and the near miss."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from ralphloop.tasks.json_places import value_lines
from ralphloop.tasks.prd_reading import PrdReading, read_prd, story_items
from ralphloop.tasks.priority_words import PRIORITY_FORMS

WILD = Path(__file__).resolve().parent.parent / "fixtures" / "wild" / "prd"


def wild(sample: str) -> bytes:
    return min((WILD / sample).rglob("prd.json"), key=lambda path: len(path.parts)).read_bytes()


def story(sid: str, priority: Any = 1, passes: Any = False, **extra: Any) -> dict[str, Any]:
    return {"id": sid, "title": f"Title {sid}", "priority": priority, "passes": passes, **extra}


def read(body: Any) -> PrdReading:
    return read_prd(json.dumps(body, indent=2).encode())


def stories_of(reading: PrdReading) -> list[dict[str, Any]]:
    assert not reading.flaws, reading.flaws
    assert reading.prd is not None
    stories: list[dict[str, Any]] = reading.prd["userStories"]
    return stories


def flaws(reading: PrdReading) -> list[tuple[int, str]]:
    assert reading.prd is None
    return [(flaw.line, flaw.message) for flaw in reading.flaws]


# ---------------------------------------------------------------- real files, read as meant


def test_stories_with_snake_case_fields_are_read_as_user_stories() -> None:
    reading = read_prd(wild("77smith-norm__applspeech"))
    stories = stories_of(reading)
    assert reading.key == "stories" and len(stories) == 11
    assert stories[0]["acceptanceCriteria"][0] == "Package.swift is valid and builds"  # acceptance_criteria
    assert stories[1]["dependsOn"] == ["S01-project-setup"]  # dependencies naming stories
    assert [story["priority"] for story in stories[:3]] == [1, 2, 3]
    assert reading.prd is not None and reading.prd["branchName"] == "main"


@pytest.mark.parametrize(
    ("sample", "key", "total", "passing"),
    [
        ("77smith-norm__applspeech", "stories", 11, 0),
        ("AccrediPro__co-duck", "stories", 27, 22),
        ("Acurioustractor__empathy-ledger-v2", "stories", 4, 0),
        ("Arsapol__agent-npa-guy", "stories", 12, 0),
        ("Diego-redpine__red-pine-beats", "stories", 28, 27),
        ("HighYieldSolar__truck-cmd", "stories", 1, 1),
        ("CCExtractor__ccextractor", "", 8, 3),
        ("Aleco127__gold-predictor-api", "userStories", 16, 4),
    ],
)
def test_real_files_are_read(sample: str, key: str, total: int, passing: int) -> None:
    reading = read_prd(wild(sample))
    stories = stories_of(reading)
    assert (reading.key, len(stories), sum(story["passes"] for story in stories)) == (key, total, passing)


def test_priority_labels_are_read_as_story_specs_read_them() -> None:
    reading = read_prd(wild("Diego-redpine__red-pine-beats"))
    by_id = {story["id"]: story["priority"] for story in stories_of(reading)}
    written = reading.priorities
    assert {written[sid].lower(): by_id[sid] for sid in by_id} == {"critical": 0, "high": 1, "medium": 2, "low": 3}


def test_dependencies_in_user_stories_are_dependencies() -> None:
    stories = stories_of(read_prd(wild("Aleco127__gold-predictor-api")))
    assert {story["id"]: story["dependsOn"] for story in stories}["US-002"] == ["US-001"]


@pytest.mark.parametrize(
    ("written", "number"),
    [(3, 3), ("3", 3), (" P0 ", 0), ("p4", 4), ("critical", 0), ("High", 1), ("MEDIUM", 2), ("low", 3)],
)
def test_a_priority_as_people_write_it(written: Any, number: int) -> None:
    assert stories_of(read({"userStories": [story("A", written)]}))[0]["priority"] == number


def test_no_priority_is_the_files_order() -> None:
    body = {"userStories": [{"id": sid, "title": sid, "passes": False} for sid in ("C", "A", "B")]}
    reading = read(body)
    assert [story["priority"] for story in stories_of(reading)] == [1, 2, 3]
    assert reading.priorities == {"C": "", "A": "", "B": ""}


def test_snake_case_everywhere_and_optional_fields_filled_in() -> None:
    body = {
        "branch_name": "feature/x",
        "created_at": "2026-01-01",
        "user_stories": [story("A"), story("B", depends_on=["A"], acceptance_criteria=["works"])],
    }
    reading = read(body)
    stories = stories_of(reading)
    assert reading.key == "user_stories"
    assert reading.prd is not None and (reading.prd["branchName"], reading.prd["createdAt"]) == (
        "feature/x",
        "2026-01-01",
    )
    assert stories[0] == {
        "id": "A",
        "title": "Title A",
        "priority": 1,
        "passes": False,
        "acceptanceCriteria": [],
        "description": "",
        "notes": "",
        "dependsOn": [],
    }
    assert (stories[1]["dependsOn"], stories[1]["acceptanceCriteria"]) == (["A"], ["works"])


def test_the_camel_case_field_wins_over_its_snake_case_twin() -> None:
    stories = stories_of(read({"userStories": [story("A", acceptanceCriteria=["x"], acceptance_criteria=["y"])]}))
    assert stories[0]["acceptanceCriteria"] == ["x"]


def test_dependencies_that_name_no_story_anywhere_are_not_ralphs() -> None:
    body = {"userStories": [story("A", dependencies=["react", "zod"]), story("B", dependencies=[])]}
    assert [story["dependsOn"] for story in stories_of(read(body))] == [[], []]


def test_a_note_is_left_alone_as_any_field_ralph_does_not_read() -> None:
    assert stories_of(read({"userStories": [story("A", note="kept on disk")]}))[0]["notes"] == ""


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_byte_order_mark_says_how_the_file_is_encoded(encoding: str) -> None:
    text = json.dumps({"userStories": [story("É", passes=True)]}, ensure_ascii=False)
    raw = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # the mark as Windows tools write it
        raw = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + raw
    assert stories_of(read_prd(raw))[0]["id"] == "É"


# ---------------------------------------------------------------- refused, with the line and the fix


def test_a_plain_status_word_or_done_flag_reads_as_passes_until_the_agent_sets_it() -> None:
    stories = stories_of(read_prd(wild("7D-codes__lifeos-core")))  # "status": "completed" / "todo"
    assert len(stories) == 12 and sum(story["passes"] for story in stories) == 4
    assert stories[0]["acceptanceCriteria"][0] == "Main lifeos CLI entry point"  # its "acceptance"
    flagged = story("A", passes=None)
    del flagged["passes"]
    assert stories_of(read({"userStories": [{**flagged, "completed": True}]}))[0]["passes"] is True
    told = {**flagged, "status": "todo", "passes": True}  # the agent set passes: it wins over the status
    assert stories_of(read({"userStories": [told]}))[0]["passes"] is True
    for word, done in (("In Progress", False), ("DONE", True), ("not_started", False)):
        assert stories_of(read({"userStories": [{**flagged, "status": word}]}))[0]["passes"] is done, word


def test_a_status_word_that_is_not_plain_is_refused_naming_it() -> None:
    body = {"userStories": [{"id": "A", "title": "a", "status": "Phase 2"}]}
    assert flaws(read(body)) == [
        (
            3,
            'userStories[0]: no "passes" (found "status": "Phase 2", which ralph does not read; add "passes": '
            "false, or true when the story is done)",
        )
    ]


def test_tasks_instead_of_user_stories_is_named_with_the_rename() -> None:
    found = flaws(read_prd(wild("BolivarTech__magi-core")))
    assert found == [(5, 'no "userStories" array (found "tasks": 12 objects with an "id"; rename it to "userStories")')]


@pytest.mark.parametrize(
    ("sample", "words"),
    [
        (
            "Capevace__claw.events",
            'no "userStories" array: another tool\'s file? (its keys: "title", "phases", "notes";',
        ),
        (
            "0livare__fastify-file-routes",
            "an array without stories: another tool's file? (its items' keys: \"category\"",
        ),
    ],
)
def test_another_tools_file_is_refused_as_such(sample: str, words: str) -> None:
    ((line, message),) = flaws(read_prd(wild(sample)))
    assert line == 1 and message.startswith(words)
    assert message.endswith('ralph reads {"userStories": [{"id": ..., "title": ..., "passes": false}, ...]})')


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"userstories": [story("A")]},
            (2, 'no "userStories" array (found "userstories"; rename it to "userStories")'),
        ),
        (
            {"userStories": [story("A")], "stories": [story("B")]},
            (10, 'both "userStories", "stories" hold the stories: keep one (ralph reads userStories)'),
        ),
        ({"stories": {}}, (2, "stories: expected an array of stories (found an object)")),
        ({"stories": []}, (2, "stories is empty (add at least one story)")),
        ({"userStories": ["A"]}, (3, "userStories[0]: expected an object (found text)")),
        (
            {"userStories": [{"id": "A", "Title": "a", "passes": False}]},
            (3, 'userStories[0]: no "title" (found "Title"; rename it to "title")'),
        ),
        (
            {"userStories": [{"id": "A", "title": "a", "pases": True}]},
            (3, 'userStories[0]: no "passes" (found "pases"; rename it to "passes")'),
        ),
        (
            {"userStories": [{"id": "A", "title": "a"}]},
            (3, 'userStories[0]: no "passes" (add "passes": false, or true when the story is done)'),
        ),
        (
            {"userStories": [{"id": "A", "title": "a", "passes": False, "prority": 2}]},
            (7, 'userStories[0]: "prority" is not a field ralph reads (did you mean "priority"?)'),
        ),
        (
            {"userStories": [{"id": "A", "title": "a", "passes": False, "depends": ["B"]}]},
            (7, 'userStories[0]: "depends" is not a field ralph reads (did you mean "dependsOn"?)'),
        ),
        (
            {"userStories": [story("A", passes="true")]},
            (7, 'userStories[0].passes: expected true or false (found "true")'),
        ),
        (
            {"userStories": [story("A", priority="soon")]},
            (6, f'userStories[0].priority: "soon" is not {PRIORITY_FORMS}'),
        ),
        ({"userStories": [story("A", priority=1.5)]}, (6, f"userStories[0].priority: 1.5 is not {PRIORITY_FORMS}")),
        (
            {"userStories": [story("A", acceptance_criteria=[1])]},
            (8, "userStories[0].acceptance_criteria: expected an array of strings"),
        ),
        ({"branch_name": 3, "userStories": [story("A")]}, (2, "branch_name: expected a string (found a number)")),
    ],
)
def test_one_problem_at_the_line_of_its_key(body: Any, expected: tuple[int, str]) -> None:
    assert flaws(read(body)) == [expected]


def test_dependencies_on_no_story_name_the_closest_id() -> None:
    body = {"stories": [story("S-01"), story("S-02", dependencies=["S-01", "S-1"])]}
    assert flaws(read(body)) == [
        (14, "story S-02's dependencies names 'S-1', which is no story's id (did you mean 'S-01'?)")
    ]


def test_a_circle_of_dependencies() -> None:
    body = {"userStories": [story("A", dependsOn=["B"]), story("B", depends_on=["A"])]}
    assert flaws(read(body)) == [(8, "dependsOn goes round in a circle: A → B → A (none of them could ever start)")]


def test_ids_empty_or_twice() -> None:
    found = flaws(read({"stories": [story("A"), story(" "), story("A")]}))
    assert found == [(10, "stories[1].id is empty"), (16, "stories[2].id 'A' is used twice (also stories[0])")]


def test_every_problem_of_every_story_is_listed() -> None:
    body = {"userStories": [{"id": "A"}, story("B", priority="soon", passes=None)]}
    assert [line for line, _ in flaws(read(body))] == [3, 3, 9, 10]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            b'{\n  "userStories": [\n    {"id": "a",,}\n  ]\n}\n',
            (3, "invalid JSON at column 16: Expecting property name enclosed in double quotes"),
        ),
        (b"", (1, "invalid JSON at column 1: Expecting value")),
        (b'{\n"userStories": "\xff"}', (2, "not UTF-8 text")),
        (codecs.BOM_UTF16_LE + b"{\x00\x00\xd8", (0, "not UTF-16 text, though it starts as if it were")),
        (b'{"userStories": [{"id": "\\u0000"}]}', (0, "userStories[0].id: a NUL character")),
        (b"[" * 100_000, (0, "invalid JSON: nested too deeply")),
    ],
)
def test_a_file_that_is_no_json_text(raw: bytes, expected: tuple[int, str]) -> None:
    assert flaws(read_prd(raw)) == [expected]


# ---------------------------------------------------------------- the helpers writers share


def test_story_items_is_the_array_as_written() -> None:
    data: dict[str, Any] = {"project": "x", "stories": [{"id": "A"}]}
    assert story_items(data) is data["stories"]
    listed = [{"id": "A"}]
    assert story_items(listed) is listed
    assert story_items({"tasks": []}) == [] and story_items("text") == []


def test_value_lines_places_keys_items_and_escaped_keys() -> None:
    text = '{\n  "a": 1,\n  "b": [\n    {"id": "x",\n     "p": true},\n    {}\n  ],\n  "k\\"q": {}\n}'
    lines = value_lines(text)
    assert lines[()] == 1 and lines[("a",)] == 2 and lines[("b",)] == 3
    assert (lines[("b", 0)], lines[("b", 0, "id")], lines[("b", 0, "p")], lines[("b", 1)]) == (4, 4, 5, 6)
    assert lines[('k"q',)] == 8


def test_a_field_called_as_ralphs_alias_that_is_something_else_is_left_alone() -> None:
    body = {"stories": 2, "userStories": [story("A", dependencies="none"), story("B", dependencies=[{"npm": "zod"}])]}
    reading = read(body)
    assert reading.key == "userStories"
    assert [story["dependsOn"] for story in stories_of(reading)] == [[], []]
