"""A checklist written without checkboxes: the near miss named, and which bullets `--fix` boxes (and which not)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.core.errors import RalphError
from ralphloop.tasks.bullets import Required, checkbox_fix, near_miss
from ralphloop.tasks.checklist import scan_checklist
from ralphloop.tasks.fix_plan import FixPlanSource, fix_plan_problems, required
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.todo_md import TodoSource

FIX = "ralph validate -f . --fix"


def every(headings: tuple[str, ...]) -> bool:
    return True


def boxed(text: str, counted: Required = required) -> str:
    fix = checkbox_fix(text, counted)
    assert fix is not None
    return fix.text


def test_a_plan_in_plain_bullets_is_refused_naming_the_first_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "fix_plan.md"
    path.write_text("# Plan\n\n## High\n- Add login\n- Fix the bug\n\n## Low\n* Tidy up\n")
    assert fix_plan_problems(str(path), "fix_plan.md") == [
        Problem(
            "fix_plan.md",
            "`- Add login` is a plain bullet: ralph counts only checkboxes (`- [ ] task`); "
            f"`{FIX}` turns the 3 bullets into checkboxes",
            4,
        )
    ]
    with pytest.raises(RalphError) as caught:  # ralph run: the same words, from the same check
        FixPlanSource(str(path), "fix_plan.md").load()
    assert str(caught.value) == str(fix_plan_problems(str(path), "fix_plan.md")[0])


def test_numbered_items_are_named_so() -> None:
    text = "## Queue\n\n1. Make it work\n   - Verify: make test\n\n2. Make it fast\n"
    found = near_miss(text, scan_checklist(text), every, FIX)
    assert found == (
        3,
        "`1. Make it work` is a numbered item: ralph counts only checkboxes (`- [ ] task`); "
        f"`{FIX}` turns the 2 numbered items into checkboxes",
    )


def test_a_todo_names_its_plan_folder_in_the_fix(tmp_path: Path) -> None:
    (tmp_path / "TODO.md").write_text("# Work\n- one\n")
    with pytest.raises(RalphError) as caught:
        TodoSource(str(tmp_path), "plans/x/").load()
    assert str(caught.value) == (
        "plans/x/TODO.md:2: `- one` is a plain bullet: ralph counts only checkboxes (`- [ ] task`); "
        "`ralph validate -f plans/x --fix` turns the 1 bullet into checkboxes"
    )


def test_tasks_written_as_headings_are_named_without_a_fix_offered() -> None:
    text = "# Plan\n\n### 1. [DONE] Add cleanup\n- **Problem:** grows\n\n### 2. [TODO] Add a check\n- **Fix:** x\n"
    line, message = near_miss(text, scan_checklist(text), every, FIX) or (0, "")
    assert line == 3
    assert message == (
        "`### 1. [DONE] Add cleanup` is a heading: ralph counts only checkboxes: "
        "write the 2 tasks as `- [ ] task` lines (`- [x] task` when done)"
    )
    assert checkbox_fix(text, every) is None  # the bullets under them are their notes


@pytest.mark.parametrize(
    "text",
    [
        "# Notes\n\nJust prose.\n- a bullet after prose\n",
        "Rules:\n1. Keep it short.\n",
        "## Notes\n- Focus on the MVP\n",
        "## Completed\n- 2026-02-27: shipped it\n",
        "```\n- in a fence\n```\n",
        "> - quoted\n",
        "<!--\n- commented\n-->\n",
        "## Tasks\n- [ ] a real box\n- a note beside it\n",
    ],
)
def test_no_near_miss_where_a_bullet_is_not_a_task(text: str) -> None:
    assert near_miss(text, scan_checklist(text), every, FIX) is None
    assert checkbox_fix(text, every) is None


def test_the_fix_boxes_task_bullets_only() -> None:
    text = (
        "# fix_plan.md\n"
        "\n"
        "Rules:\n"
        "1. Keep it short.\n"
        "\n"
        "## Queue\n"
        "\n"
        "1. Make orchestration complete\n"
        "   - Specs: `specs/03.md`\n"
        "   - Done when:\n"
        "     - a test proves it\n"
        "\n"
        "2. Implement credentials\n"
        "\n"
        "```md\n"
        "- not a task: an example\n"
        "```\n"
        "\n"
        "## Completed\n"
        "\n"
        "- 2026-02-27: Brain job groups\n"
    )
    fix = checkbox_fix(text, required)
    assert fix is not None and fix.lines == (8, 13) and fix.noun == "numbered items"
    changed = [(a, b) for a, b in zip(text.splitlines(), fix.text.splitlines(), strict=True) if a != b]
    assert changed == [
        ("1. Make orchestration complete", "1. [ ] Make orchestration complete"),
        ("2. Implement credentials", "2. [ ] Implement credentials"),
    ]
    assert [item.text for item in scan_checklist(fix.text).items] == [
        "Make orchestration complete",
        "Implement credentials",
    ]


def test_items_marked_done_get_a_ticked_box() -> None:
    text = "## Work\n- ✅ Set up CI\n- ~~Drop Python 3.9~~\n- [DONE] Write the README\n- Add login\n"
    assert boxed(text) == (
        "## Work\n- [x] ✅ Set up CI\n- [x] ~~Drop Python 3.9~~\n- [x] [DONE] Write the README\n- [ ] Add login\n"
    )


def test_the_fix_keeps_line_endings_the_bom_markers_and_indents() -> None:
    text = "\ufeff- first\r\n*   second\r\n+\tthird\r\n3) fourth\r\n"
    assert boxed(text) == "\ufeff- [ ] first\r\n*   [ ] second\r\n+\t[ ] third\r\n3) [ ] fourth\r\n"


def test_a_fix_plan_leaves_optional_sections_alone() -> None:
    text = "## High\n- Add login\n\n## LOW — Nice to have\n- Dark mode\n"
    assert boxed(text) == "## High\n- [ ] Add login\n\n## LOW — Nice to have\n- Dark mode\n"
    only_optional = "## Optional\n- Dark mode\n"
    assert checkbox_fix(only_optional, required) is None
    assert checkbox_fix(only_optional, every) is not None  # a TODO.md has no optional sections


def test_no_fix_once_a_plan_has_counted_boxes() -> None:
    assert checkbox_fix("## Work\n- [ ] a\n- b\n", required) is None
    # boxes only where they do not count: the bullets elsewhere are the near miss
    assert boxed("## Optional\n- [ ] idea\n## Work\n- b\n") == "## Optional\n- [ ] idea\n## Work\n- [ ] b\n"


def test_a_long_line_is_quoted_short_and_its_backticks_kept_apart() -> None:
    text = "- Add `/api/v1/license/status` and a CLI to show the license id, the support level and its validity\n"
    _, message = near_miss(text, scan_checklist(text), every, FIX) or (0, "")
    assert message.startswith("`- Add '/api/v1/license/status' and a CLI to show the licens…` is a plain bullet")


_LINES = st.sampled_from(
    [
        "- a",
        "* b",
        "1. c",
        "2) d",
        "  - sub",
        "## H",
        "## Notes",
        "## Optional",
        "Rules:",
        "",
        "```",
        "> - q",
        "<!--",
        "-->",
        "| a | [ ] |",
        "|---|---|",
        "- [ ] box",
        "- ✅ done",
        "---",
        "text",
        "\ufeff- e",
        "-",
        "\t- f",
    ]
)


@given(st.lists(_LINES, max_size=14), st.sampled_from(["\n", "\r\n", "\r"]))
def test_the_fix_changes_only_the_lines_it_names_and_they_become_the_tasks(lines: list[str], end: str) -> None:
    text = end.join(lines)
    checklist = scan_checklist(text)
    near_miss(text, checklist, required, FIX)  # never raises
    fix = checkbox_fix(text, required)
    if fix is None:
        return
    before, after = text.split(end), fix.text.split(end)
    assert len(before) == len(after)
    changed = tuple(number for number, (a, b) in enumerate(zip(before, after, strict=True), start=1) if a != b)
    assert changed == fix.lines
    counted = [item.line for item in scan_checklist(fix.text).items if required(item.headings)]
    assert counted == list(fix.lines)
