"""TODO.md plan directories: positional ids, the next task, errors that name the file, the prompt section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Task, TaskSource
from ralphloop.tasks.checklist import parse_checklist
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.todo_md import TodoSource, new_todo, todo_problems

SHOWN = "plans/x"


def plan(tmp_path: Path, text: str | bytes) -> TodoSource:
    folder = tmp_path / "x"
    folder.mkdir(exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode()
    (folder / "TODO.md").write_bytes(data)
    return TodoSource(str(folder), SHOWN)


def load_error(source: TodoSource) -> str:
    with pytest.raises(RalphError) as caught:
        source.load()
    return str(caught.value)


# ---------------------------------------------------------------- tasks


def test_tasks_are_every_box_in_file_order_with_positional_ids(tmp_path: Path) -> None:
    source = plan(tmp_path, "# Plan\n\n- [x] Set up\n- [ ] Build it\n  - [ ] Nested step\n- [X] Early bonus\n")
    view = source.load()
    assert [(task.id, task.title, task.done, task.line) for task in view.tasks] == [
        ("T1", "Set up", True, 3),
        ("T2", "Build it", False, 4),
        ("T3", "Nested step", False, 5),
        ("T4", "Early bonus", True, 6),
    ]
    assert view.next_task is not None
    assert view.next_task.id == "T2"
    assert (view.done_count, view.total, view.all_done) == (2, 4, False)


def test_done_when_no_box_is_unchecked(tmp_path: Path) -> None:
    view = plan(tmp_path, "- [x] a\n- [X] b\n").load()
    assert view.all_done
    assert view.next_task is None


def test_the_file_is_reread_at_every_load(tmp_path: Path) -> None:
    source = plan(tmp_path, "- [ ] a\n- [ ] b\n")
    first = source.load().next_task
    plan(tmp_path, "- [x] a\n- [ ] b\n- [ ] c added by the agent\n")
    view = source.load()
    assert first is not None and first.id == "T1"
    assert view.next_task is not None and view.next_task.id == "T2"
    assert view.tasks[2] == Task(id="T3", title="c added by the agent", done=False, line=3)


def test_boxes_in_code_and_comments_are_not_tasks(tmp_path: Path) -> None:
    view = plan(tmp_path, "```\n- [ ] example\n```\n<!-- - [ ] later -->\n- [ ] real\n").load()
    assert [task.title for task in view.tasks] == ["real"]
    assert view.tasks[0].id == "T1"


def test_paths_are_shown_as_the_user_typed_the_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    assert TodoSource(str(tmp_path / "x"), "plans/x").path == "plans/x/TODO.md"
    assert TodoSource(str(tmp_path / "x"), "plans/x/").path == "plans/x/TODO.md"
    source: TaskSource = TodoSource(str(tmp_path / "x"), SHOWN)
    assert (source.kind, source.marks_done) == ("todo", False)


def test_mark_done_leaves_the_file_alone(tmp_path: Path) -> None:
    source = plan(tmp_path, "- [ ] a\n")
    task = source.load().tasks[0]
    assert source.mark_done(task, "2026-01-01T00:00:00Z") == []
    assert (tmp_path / "x" / "TODO.md").read_text() == "- [ ] a\n"


# ---------------------------------------------------------------- problems


def test_missing_todo_uses_the_seed_wording_with_the_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    source = TodoSource(str(tmp_path / "x"), "plans/x/")
    assert load_error(source) == "plans/x: TODO.md not found in plan directory"


def test_missing_plan_directory(tmp_path: Path) -> None:
    source = TodoSource(str(tmp_path / "nope"), SHOWN)
    assert load_error(source) == "plans/x: plan directory not found"


def test_not_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    source = plan(tmp_path, b"- [ ] a\r\n- [ ] caf\xe9\r\n")
    assert load_error(source) == "plans/x/TODO.md:2: not UTF-8 text"


def test_a_todo_that_is_a_folder_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "x" / "TODO.md").mkdir(parents=True)
    message = load_error(TodoSource(str(tmp_path / "x"), SHOWN))
    assert message.startswith("plans/x/TODO.md: not a regular file but a folder")


@pytest.mark.parametrize(
    "text", ["", "\ufeff", "# Plan\n\nJust prose.\n- a plain bullet\n", "- [ ]\n\nA note.\n- [2026-01-01] done\n"]
)
def test_no_checkbox_is_an_error_naming_the_file(tmp_path: Path, text: str) -> None:
    message = load_error(plan(tmp_path, text))
    assert re.fullmatch(r"plans/x/TODO\.md:\d+: no tasks: .*; write each task as a `- \[ \] task` line", message)


def test_validate_sees_every_problem_and_run_the_first(tmp_path: Path) -> None:
    source = plan(tmp_path, "# Plan\n\n```\n- [ ] hidden by the open fence\n")
    problems = todo_problems(source.folder, SHOWN)
    assert problems == [
        Problem("plans/x/TODO.md", "code fence ``` opened here is never closed, so no task below it counts", 3),
        Problem(
            "plans/x/TODO.md",
            "no tasks: no checkbox (`- [ ] task`) here, only 1 heading in 3 lines, the first `# Plan`; write each "
            "task as a `- [ ] task` line",
            1,
        ),
    ]
    message = load_error(source)
    assert message.startswith("plans/x/TODO.md:3: code fence ``` opened here is never closed")
    assert message.endswith("(and 1 more problem; all of them: ralph validate -f plans/x)")


def test_an_open_fence_below_real_tasks_still_stops_the_run(tmp_path: Path) -> None:
    # Otherwise the boxes it hides would not count and the plan could look complete too soon.
    source = plan(tmp_path, "- [x] a\n~~~\n- [ ] b\n")
    assert load_error(source) == (
        "plans/x/TODO.md:2: code fence ~~~ opened here is never closed, so no task below it counts"
    )


def test_a_good_file_has_no_problems_and_repeated_text_is_fine(tmp_path: Path) -> None:
    source = plan(tmp_path, "## Backend\n- [ ] Run the tests\n## Frontend\n- [ ] Run the tests\n")
    assert todo_problems(source.folder, SHOWN) == []
    assert [task.id for task in source.load().tasks] == ["T1", "T2"]


# ---------------------------------------------------------------- the prompt section


def test_describe_names_the_task_the_file_and_the_completion_rule(tmp_path: Path) -> None:
    source = plan(tmp_path, "# Plan\n- [x] a\n- [ ] Add the login form\n")
    task = source.load().next_task
    assert task is not None
    section = source.describe(task)
    assert section.startswith("## Current task: Add the login form\n")
    assert "line 3 of plans/x/TODO.md" in section
    assert "`- [x]`" in section
    assert "plans/x/progress.txt" in section
    assert "<promise>COMPLETE</promise>" in section
    assert "Later tasks" not in section


def test_describe_lists_at_most_five_later_open_tasks(tmp_path: Path) -> None:
    lines = ["- [ ] current", "- [x] already done"] + [f"- [ ] later {n}" for n in range(1, 9)]
    source = plan(tmp_path, "\n".join(lines) + "\n")
    view = source.load()
    assert view.next_task is not None
    section = source.describe(view.next_task)
    tail = section.split("Later tasks (do not start them now):\n", 1)[1].splitlines()
    assert tail == [f"- later {n}" for n in range(1, 6)] + ["- ... and 3 more"]
    assert "already done" not in section


def test_describe_lists_only_tasks_after_the_current_one(tmp_path: Path) -> None:
    source = plan(tmp_path, "- [ ] first\n- [ ] second\n- [ ] third\n")
    view = source.load()
    section = source.describe(view.tasks[1])
    assert section.endswith("Later tasks (do not start them now):\n- third")


# ---------------------------------------------------------------- ralph init


def test_new_todo_is_a_valid_plan_of_three_example_tasks(tmp_path: Path) -> None:
    text = new_todo("login")
    items = parse_checklist(text)
    assert text.startswith("# login\n")
    assert len(items) == 3
    assert not any(item.checked for item in items)
    assert all("Replace" in item.text for item in items)
    view = plan(tmp_path, text).load()
    assert view.next_task is not None and view.next_task.id == "T1"
