"""Checklists and sprints real users wrote (tests/fixtures/wild/; origins in SOURCES.tsv, notes in TESTS.md): each
read as they meant it, or refused naming the file, the line, the near miss and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.tasks.bullets import checkbox_fix
from ralphloop.tasks.fix_plan import FixPlanSource, required
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.todo_md import TodoSource

WILD = Path(__file__).parent.parent / "fixtures" / "wild"


def plan(sample: str, name: str) -> FixPlanSource:
    return FixPlanSource(str(WILD / "fixplan" / sample / name), name)


def refusal(source: FixPlanSource | TodoSource | GoalSource) -> str:
    with pytest.raises(RalphError) as caught:
        source.load()
    return str(caught.value)


@pytest.mark.parametrize(
    ("sample", "name", "counted", "still_open", "first_open"),
    [
        # Optional sections that say more than "Optional" (their headings: the fixtures' README)
        ("2listic__coral", "fix_plan.md", 84, 84, None),
        ("Smartnewb__SSR_Research", "@fix_plan.md", 15, 0, None),
        ("PonchoManBun__dnd-dm", "@fix_plan.md", 48, 11, "Wire Forge into orchestrator"),
        ("PBaumfalk__AI-Lawyer", ".ralph/fix_plan.md", 78, 60, None),
        ("DevMan57__indextts2-rust", "@fix_plan.md", 35, 0, None),
        ("amit-t__bookshelf", ".ralph/fix_plan.md", 52, 26, None),
        # checkboxes in a table
        ("Davidc4ke__ZoniqPM", ".ralph/fix_plan.md", 27, 27, "1.1 | Run `/bmad-bmm-create-story` for story 1-1"),
    ],
)
def test_real_plans_count_what_their_authors_meant(
    sample: str, name: str, counted: int, still_open: int, first_open: str | None
) -> None:
    view = plan(sample, name).load()
    assert (len(view.tasks), sum(not task.done for task in view.tasks)) == (counted, still_open)
    if first_open is not None:
        assert view.next_task is not None and view.next_task.title.startswith(first_open)


def test_optional_items_of_real_plans_are_left_out() -> None:
    titles = [task.title for task in plan("PonchoManBun__dnd-dm", "@fix_plan.md").load().tasks]
    assert "Streaming LLM responses (token-by-token display in DM panel)" not in titles  # LOW — Nice to have
    assert "Companion AI during non-combat (follow behavior, idle animations)" not in titles  # LOW — Deferred
    assert "Companion AI during non-combat (deferred from Phase 1)" in titles  # MEDIUM — Should complete
    lawyer = [task.title for task in plan("PBaumfalk__AI-Lawyer", ".ralph/fix_plan.md").load().tasks]
    assert not any(title.startswith("Rechnungen:") for title in lawyer)  # Priority 3: Polish/Nice-to-have


def test_a_table_row_task_is_ticked_in_its_cell() -> None:
    source = plan("Davidc4ke__ZoniqPM", ".ralph/fix_plan.md")
    view = source.load()
    assert view.next_task is not None and view.next_task.line == 13
    prompt = source.describe(view.next_task)
    assert "tick its box in the table row on line 13 (the cell `[ ]` becomes `[x]`)" in prompt


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        (
            "LibreLoom__LibreServ",
            "fix_plan.md:4: `- Add CSRF protection for browser flows (issue/validate tok…` is a plain bullet: ralph "
            "counts only checkboxes (`- [ ] task`); `ralph validate -f . --fix` turns the 13 bullets into checkboxes",
        ),
        (
            "SecBear__neuron",
            "fix_plan.md:13: `1. Make orchestration “core complete” for composed systems` is a numbered item: ralph "
            "counts only checkboxes (`- [ ] task`); `ralph validate -f . --fix` turns the 2 numbered items into "
            "checkboxes",
        ),
        (
            "Eiai-Solutions__AxenWP",
            "fix_plan.md:5: `### 1. [DONE] Add chat history cleanup to prevent unbounded…` is a heading: ralph "
            "counts only checkboxes: write the 8 tasks as `- [ ] task` lines (`- [x] task` when done)",
        ),
    ],
)
def test_real_plans_without_checkboxes_are_refused_naming_the_near_miss(sample: str, message: str) -> None:
    assert refusal(plan(sample, "fix_plan.md")) == message


def test_the_fix_of_real_plans_boxes_their_tasks_and_nothing_else() -> None:
    libre = (WILD / "fixplan" / "LibreLoom__LibreServ" / "fix_plan.md").read_text()
    fix = checkbox_fix(libre, required)
    assert fix is not None and fix.lines == (4, 5, 6, 9, 10, 11, 14, 15, 16, 19, 20, 23, 24)
    neuron = (WILD / "fixplan" / "SecBear__neuron" / "fix_plan.md").read_text()
    fix = checkbox_fix(neuron, required)
    # not the "Rules:" list (7-9), nor the sub-bullets, nor the ten dated entries under "## Completed"
    assert fix is not None and fix.lines == (13, 23)
    axen = (WILD / "fixplan" / "Eiai-Solutions__AxenWP" / "fix_plan.md").read_text()
    assert checkbox_fix(axen, required) is None  # **Problem:**/**Fix:** bullets describe the heading tasks


@pytest.mark.parametrize(
    ("sample", "folder"),
    [("project-zenith-systems__geostationary", "."), ("alfredjeanlab__claudeless", "plans")],
)
def test_prose_todos_stay_refused_without_a_fix_offered(sample: str, folder: str) -> None:
    source = TodoSource(str(WILD / "todo" / sample / folder), folder)
    said = refusal(source)
    assert re.search(r"TODO\.md:\d+: no tasks: no checkbox \(`- \[ \] task`\) here, only \d+ headings", said), said
    assert "--fix" not in said


SPRINT = "Mission42-ai__m42-claude-plugins--"


@pytest.mark.parametrize(
    ("sample", "folder", "message"),
    [
        (
            "bughunt",
            ".claude/sprints/2026-01-20_bughunt-m42-sprint",
            "SPRINT.yaml:10: workflow: expected ralph, not 'bughunt-full' (an m42-sprint workflow): ralph runs a "
            "SPRINT.yaml only with `workflow: ralph` and a `goal:` text, and plans its own steps (the step under "
            "`steps:` at line 12 is m42-sprint's: ralph does not read it); write those two keys, or run this "
            "sprint with m42-sprint",
        ),
        (
            "claudemd",
            ".claude/sprints/2026-02-05_claudemd-commands",
            "SPRINT.yaml:2: workflow: expected ralph, not 'plugin-development' (an m42-sprint workflow): ralph runs "
            "a SPRINT.yaml only with `workflow: ralph` and a `goal:` text, and plans its own steps (the 3 steps "
            "under `collections.step` at line 6 are m42-sprint's: ralph does not read them); write those two keys, "
            "or run this sprint with m42-sprint",
        ),
        (
            "minimal-fixture",
            "plugins/m42-sprint/e2e/fixtures/minimal-sprint",
            "SPRINT.yaml:6: workflow: expected ralph, not 'tdd-cycle' (an m42-sprint workflow)",
        ),
        (
            "pdf-export",
            ".claude/sprints/2026-01-21_issue-13-pdf-export",
            "SPRINT.yaml:4: workflow: expected ralph, not 'plugin-development' (an m42-sprint workflow): ralph runs "
            "a SPRINT.yaml only with `workflow: ralph` and a `goal:` text, and plans its own steps (the 5 steps "
            "under `steps:` at line 6 are m42-sprint's",
        ),
        (
            "test-ralph-loop",
            ".claude/sprints/2026-01-15_Test-Ralph-Loop",
            "SPRINT.yaml: no `workflow:` key: ralph runs a SPRINT.yaml only with `workflow: ralph` and a `goal:` "
            "text (this one has `goals:` at line 22, a list, where ralph reads `goal:`); write both",
        ),
    ],
)
def test_m42_sprints_are_refused_naming_line_and_near_miss(sample: str, folder: str, message: str) -> None:
    root = WILD / "sprint" / f"{SPRINT}{sample}"
    assert refusal(GoalSource(str(root / folder), folder, str(root))).startswith(f"{folder}/{message}")


def test_the_ralph_workflow_sprint_is_accepted() -> None:
    root = WILD / "sprint" / f"{SPRINT}ralph-refactor"
    folder = ".claude/sprints/2026-01-18_m42-sprint-refactor"
    view = GoalSource(str(root / folder), folder, str(root)).load()
    assert view.next_task is not None and view.next_task.id == "goal"
