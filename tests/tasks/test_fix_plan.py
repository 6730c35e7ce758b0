"""fix_plan.md (seed 000): where it is found, the sections that do not count, errors, the prompt section."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.analysis.status_block import last_block
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import TaskSource
from ralphloop.tasks.checklist import parse_checklist
from ralphloop.tasks.fix_plan import (
    FixPlanSource,
    counts,
    find_fix_plan,
    find_prompt,
    fix_plan_problems,
    new_fix_plan,
    new_prompt_md,
)
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.sections import optional_section as ignored_section

SHOWN = "fix_plan.md"


def plan(tmp_path: Path, text: str | bytes, name: str = "fix_plan.md") -> FixPlanSource:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return FixPlanSource(str(path), SHOWN)


def load_error(source: FixPlanSource) -> str:
    with pytest.raises(RalphError) as caught:
        source.load()
    return str(caught.value)


def titles(source: FixPlanSource) -> list[str]:
    return [task.title for task in source.load().tasks]


# ---------------------------------------------------------------- finding the files


@pytest.mark.parametrize(
    ("present", "found"),
    [
        (["fix_plan.md", "@fix_plan.md", ".ralph/fix_plan.md"], "fix_plan.md"),
        (["@fix_plan.md", ".ralph/fix_plan.md"], "@fix_plan.md"),
        ([".ralph/fix_plan.md", ".ralph/@fix_plan.md"], ".ralph/fix_plan.md"),
        ([".ralph/@fix_plan.md"], ".ralph/@fix_plan.md"),
    ],
)
def test_find_fix_plan_checks_the_four_places_in_order(tmp_path: Path, present: list[str], found: str) -> None:
    (tmp_path / ".ralph").mkdir()
    for name in present:
        (tmp_path / name).write_text("- [ ] a\n")
    assert find_fix_plan(str(tmp_path)) == str(tmp_path / found)


def test_find_fix_plan_finds_nothing_and_ignores_folders(tmp_path: Path) -> None:
    (tmp_path / "fix_plan.md").mkdir()
    (tmp_path / "TODO.md").write_text("- [ ] a\n")
    assert find_fix_plan(str(tmp_path)) is None


def test_find_prompt_prefers_the_one_beside_the_fix_plan(tmp_path: Path) -> None:
    (tmp_path / ".ralph").mkdir()
    (tmp_path / "PROMPT.md").write_text("root prompt")
    (tmp_path / ".ralph" / "PROMPT.md").write_text("inner prompt")
    assert find_prompt(str(tmp_path)) == str(tmp_path / "PROMPT.md")  # no plan yet: the folder first
    (tmp_path / ".ralph" / "fix_plan.md").write_text("- [ ] a\n")
    assert find_prompt(str(tmp_path)) == str(tmp_path / ".ralph" / "PROMPT.md")
    (tmp_path / "@fix_plan.md").write_text("- [ ] a\n")
    assert find_prompt(str(tmp_path)) == str(tmp_path / "PROMPT.md")


def test_find_prompt_falls_back_to_the_other_place(tmp_path: Path) -> None:
    (tmp_path / ".ralph").mkdir()
    (tmp_path / ".ralph" / "fix_plan.md").write_text("- [ ] a\n")
    assert find_prompt(str(tmp_path)) is None
    (tmp_path / "PROMPT.md").write_text("root prompt")
    assert find_prompt(str(tmp_path)) == str(tmp_path / "PROMPT.md")


# ---------------------------------------------------------------- sections that do not count


@pytest.mark.parametrize(
    "heading",
    [
        "Optional",
        "Future",
        "Future Enhancements",
        "Nice to Have",
        "OPTIONAL",
        "nice to have",
        "future enhancements",
        "🔮 Future Enhancements (later)",
        "Optional:",
        "**Optional**",
        "Nice-to-Have ✨",
        "Future (post 1.0) 🚀",
        "(Optional)",
        "  Nice   to   have  ",
    ],
)
def test_optional_headings(heading: str) -> None:
    assert ignored_section(heading)


@pytest.mark.parametrize(
    "heading",
    ["High Priority", "Optional tasks we must do", "Optionality", "Not optional", "Nice", ""],
)
def test_headings_that_count(heading: str) -> None:
    assert not ignored_section(heading)


@pytest.mark.parametrize("level", ["#", "##", "###", "######"])
@pytest.mark.parametrize("name", ["Optional", "Future", "Future Enhancements", "Nice to Have"])
def test_items_under_each_optional_heading_are_not_tasks(tmp_path: Path, level: str, name: str) -> None:
    source = plan(tmp_path, f"- [ ] before\n{level} {name}\n- [ ] skipped\n  - [ ] nested skipped\n")
    assert titles(source) == ["before"]


def test_setext_optional_headings_count_too(tmp_path: Path) -> None:
    source = plan(tmp_path, "Work\n====\n- [ ] a\n\nNice to Have\n------------\n- [ ] b\n")
    assert titles(source) == ["a"]


def test_a_deeper_heading_stays_optional_and_a_sibling_ends_it(tmp_path: Path) -> None:
    text = (
        "# Fix plan\n"
        "## High Priority\n"
        "- [x] a\n"
        "## 🔮 Future Enhancements (later)\n"
        "- [ ] b\n"
        "### Performance\n"
        "- [ ] c\n"
        "## Low Priority\n"
        "- [ ] d\n"
        "# Appendix\n"
        "- [ ] e\n"
    )
    source = plan(tmp_path, text)
    view = source.load()
    assert [(task.id, task.title, task.line) for task in view.tasks] == [
        ("F1", "a", 3),
        ("F2", "d", 9),
        ("F3", "e", 11),
    ]
    assert view.next_task is not None and view.next_task.title == "d"


def test_an_optional_parent_heading_hides_every_section_under_it(tmp_path: Path) -> None:
    source = plan(tmp_path, "- [ ] a\n# Optional\n## High Priority\n- [ ] b\n")
    assert titles(source) == ["a"]


def test_counts_reads_the_whole_heading_path() -> None:
    items = parse_checklist("# Nice to have\n## Backend\n- [ ] a\n# Backend\n- [ ] b\n")
    assert [counts(item) for item in items] == [False, True]


def test_done_when_every_counted_item_is_checked(tmp_path: Path) -> None:
    source = plan(tmp_path, "## High Priority\n- [x] a\n- [X] b\n## Optional\n- [ ] someday\n")
    view = source.load()
    assert view.all_done and view.next_task is None
    assert [task.id for task in view.tasks] == ["F1", "F2"]
    assert fix_plan_problems(source.file, SHOWN) == []


def test_not_done_while_a_counted_item_is_open(tmp_path: Path) -> None:
    source = plan(tmp_path, "## Optional\n- [x] idea\n## Medium Priority\n- [x] a\n- [ ] b\n")
    view = source.load()
    assert not view.all_done
    assert view.next_task is not None and (view.next_task.id, view.next_task.title) == ("F2", "b")


def test_the_at_sign_name_and_crlf_work_alike(tmp_path: Path) -> None:
    source = plan(
        tmp_path, "\ufeff## High Priority\r\n- [ ] a\r\n```\r\n- [ ] code\r\n```\r\n- [ ] b\r\n", "@fix_plan.md"
    )
    assert [(task.title, task.line) for task in source.load().tasks] == [("a", 2), ("b", 6)]


# ---------------------------------------------------------------- problems


def test_missing_file_names_it(tmp_path: Path) -> None:
    source = FixPlanSource(str(tmp_path / "fix_plan.md"), ".ralph/fix_plan.md")
    assert load_error(source) == ".ralph/fix_plan.md: file not found"


def test_not_utf8_names_the_file(tmp_path: Path) -> None:
    assert load_error(plan(tmp_path, b"\xff\xfe- [ ] a\n")) == "fix_plan.md:1: not UTF-8 text"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "fix_plan.md:1: no tasks: the file is empty; write each task as a `- [ ] task` line"),
        (
            "# Fix plan\n\nNothing yet.\n",
            "fix_plan.md:1: no tasks: no checkbox (`- [ ] task`) here, only 1 heading in 2 lines, the first "
            "`# Fix plan`; write each task as a `- [ ] task` line",
        ),
        (
            "Links:\n- [link](https://example.com)\n",
            "fix_plan.md:2: no tasks: no checkbox (`- [ ] task`) here, only 1 list item of notes in 2 lines, the "
            "first `- [link](https://example.com)`; write each task as a `- [ ] task` line",
        ),
    ],
)
def test_no_checkbox_is_an_error_naming_what_is_there_instead(tmp_path: Path, text: str, said: str) -> None:
    assert load_error(plan(tmp_path, text)) == said


def test_only_optional_items_is_an_error_that_says_why(tmp_path: Path) -> None:
    source = plan(tmp_path, "## Optional\n- [ ] a\n## Future\n- [x] b\n")
    assert fix_plan_problems(source.file, SHOWN) == [
        Problem(
            SHOWN,
            "no tasks outside Optional, Future, Nice to Have and other optional sections "
            "(write them as '- [ ] task' lines)",
        )
    ]


def test_an_unclosed_comment_is_reported_with_its_line(tmp_path: Path) -> None:
    source = plan(tmp_path, "- [ ] a\n<!-- parked:\n- [ ] b\n")
    assert fix_plan_problems(source.file, SHOWN) == [
        Problem(SHOWN, "HTML comment <!-- opened here is never closed, so no task below it counts", 2)
    ]
    assert load_error(source).startswith("fix_plan.md:2: HTML comment <!-- opened here is never closed")


# ---------------------------------------------------------------- the source and its prompt section


def test_source_shows_the_display_path(tmp_path: Path) -> None:
    source: TaskSource = plan(tmp_path, "- [ ] a\n")
    assert (source.kind, source.path, source.marks_done) == ("fix-plan", SHOWN, False)
    task = source.load().tasks[0]
    assert source.mark_done(task, "2026-01-01T00:00:00Z") == []
    assert (tmp_path / "fix_plan.md").read_text() == "- [ ] a\n"


def test_describe_names_the_item_the_file_and_the_completion_rule(tmp_path: Path) -> None:
    source = plan(
        tmp_path, "## High Priority\n- [x] done\n- [ ] Fix the flaky test\n- [ ] Next\n## Optional\n- [ ] x\n"
    )
    task = source.load().next_task
    assert task is not None
    section = source.describe(task)
    assert section.startswith("## Current task: Fix the flaky test\n")
    assert "F2, line 3 of fix_plan.md" in section
    assert "`- [x]`" in section
    assert "except those in the sections ralph counts as optional (under a heading, or a part of one" in section
    assert "<promise>COMPLETE</promise>" in section
    assert section.endswith("Later items (do not start them now):\n- Next")


# ---------------------------------------------------------------- ralph init


def test_new_fix_plan_has_the_three_sections_and_optional_does_not_count(tmp_path: Path) -> None:
    text = new_fix_plan("login")
    headings = {item.heading for item in parse_checklist(text)}
    assert headings == {"High Priority", "Medium Priority", "Optional"}
    view = plan(tmp_path, text).load()
    assert view.total == 3
    assert all(not task.done and task.title.startswith("Replace") for task in view.tasks)


def test_new_prompt_md_tells_the_agent_the_plan_and_the_signals() -> None:
    text = new_prompt_md("login")
    assert "login" in text
    assert "`fix_plan.md` (`@fix_plan.md` in older layouts)" in text
    assert "<promise>COMPLETE</promise>" in text
    assert "ralph signal complete" in text
    found = last_block(text)
    assert found is not None
    assert found[1].closed


def test_new_prompt_md_names_the_plan_file_it_is_given() -> None:
    text = new_prompt_md("login", plan_file="@fix_plan.md")
    assert "`@fix_plan.md`: the prioritised checklist" in text
    assert "older layouts" not in text
    assert "`fix_plan.md`" not in text
