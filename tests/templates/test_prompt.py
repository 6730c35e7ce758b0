"""The prompt: template placeholders, the task section, notes, and a bounded slice of progress.txt."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ralphloop.core.errors import RalphError
from ralphloop.templates.prompt import (
    ENTRY_SEPARATOR,
    PromptParts,
    build_prompt,
    default_template,
    load_template,
    recent_progress,
)

MARKER = "[... older text cut ...]\n"
HEADER = "# Progress Log: feat\n# Started: 2026-01-01T00:00:00Z\n"


def entry(number: int, filler: int = 200) -> str:
    body = f"Learned thing {number}: " + "x" * filler
    return f"\n---\nIteration: {number}\nStory: S-{number}\nStatus: done\nLearnings:\n  - {body}\n"


def progress_file(path: Path, count: int, filler: int = 200) -> str:
    text = HEADER + "".join(entry(n, filler) for n in range(1, count + 1))
    path.write_text(text, encoding="utf-8")
    return text


# ---------------------------------------------------------------- recent_progress


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert recent_progress(str(tmp_path / "progress.txt"), 1024) == ("", 0)


def test_small_file_is_returned_whole(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    text = progress_file(path, 3)
    recent, size = recent_progress(str(path), 16 * 1024)
    assert size == len(text.encode())
    assert recent == text.strip("\n")
    assert recent.startswith("# Progress Log: feat")


def test_file_exactly_at_the_budget_is_returned_whole(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    text = progress_file(path, 4)
    size = len(text.encode())
    assert recent_progress(str(path), size) == (text.strip("\n"), size)


def test_large_file_keeps_only_whole_newest_entries(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    text = progress_file(path, 100)
    budget = 2048
    recent, size = recent_progress(str(path), budget)
    assert size == len(text.encode())
    assert len(recent.encode()) <= budget
    assert recent.startswith("---\nIteration: ")
    assert text.rstrip("\n").endswith(recent)
    assert recent.endswith(entry(100).strip("\n"))
    # Each kept piece is a whole entry of the file.
    pieces = recent.split(ENTRY_SEPARATOR)
    numbers = [int(piece.removeprefix("---\n").split("\n", 1)[0].removeprefix("Iteration: ")) for piece in pieces]
    assert numbers == list(range(numbers[0], 101))
    assert len(numbers) >= 2
    for number, piece in zip(numbers, pieces, strict=True):
        assert piece.removeprefix("---\n").strip("\n") == entry(number).strip("\n").removeprefix("---\n")
    assert "# Progress Log" not in recent


def test_single_giant_entry_keeps_its_tail_with_a_marker(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    lines = [f"line {n:05d} " + "y" * 40 for n in range(2000)]
    text = HEADER + "\n---\nIteration: 1\n" + "\n".join(lines) + "\n"
    path.write_text(text)
    budget = 4096
    recent, size = recent_progress(str(path), budget)
    assert size == len(text.encode())
    assert recent.startswith(MARKER)
    tail = recent.removeprefix(MARKER)
    assert text.rstrip("\n").endswith(tail)
    assert tail.endswith(lines[-1])
    # The tail starts at a whole line, not in the middle of one.
    assert tail.startswith("line ")
    assert len(recent.encode()) <= budget + len(MARKER)


_line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=60)
_entry = st.lists(_line, max_size=8).map(lambda lines: "\n---\n" + "\n".join(lines) + "\n")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=200)
@given(
    head=_line,
    entries=st.lists(_entry, max_size=12),
    giant=st.text(st.characters(blacklist_categories=("Cs",)), max_size=400),
    budget=st.integers(min_value=8, max_value=600),
)
@example(head="", entries=[], giant="\U00010000\U00010000\U00010000" + "z" * 20, budget=16)
def test_never_exceeds_the_budget_plus_the_marker(
    tmp_path: Path, head: str, entries: list[str], giant: str, budget: int
) -> None:
    path = tmp_path / "progress.txt"
    text = head + "".join(entries) + giant
    path.write_text(text, encoding="utf-8")
    recent, size = recent_progress(str(path), budget)
    assert size == len(text.encode())
    assert len(recent.encode()) <= budget + len(MARKER)
    if size <= budget:
        assert recent == text.strip("\n")


def test_giant_entry_cut_inside_a_character_has_no_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    # One line of 4-byte characters and no newline in the budget: the window starts inside a character.
    text = HEADER + "\n---\nIteration: 1\n" + "\U0001f389" * 1000 + "\n"
    path.write_text(text, encoding="utf-8")
    recent, _ = recent_progress(str(path), 1022)
    assert recent.startswith(MARKER)
    assert "\ufffd" not in recent
    assert len(recent.encode()) <= 1022 + len(MARKER)


# ---------------------------------------------------------------- build_prompt


def parts(tmp_path: Path, **changes: object) -> PromptParts:
    values: dict[str, object] = {
        "iteration": 7,
        "feature": "checkout",
        "feature_dir": ".ralph/checkout",
        "prd": ".ralph/checkout/prd.json",
        "progress": ".ralph/checkout/progress.txt",
        "progress_file": str(tmp_path / "progress.txt"),
        "task_id": "S-3",
        "task_section": "## Current story: S-3 - Pay by card",
        "notes": (),
    }
    values.update(changes)
    return PromptParts(**values)  # type: ignore[arg-type]


def test_placeholders_are_replaced(tmp_path: Path) -> None:
    template = "F={{feature}} D={{feature_dir}} P={{prd}} G={{progress}} I={{iteration}} T={{task_id}} again {{prd}}"
    prompt = build_prompt(template, parts(tmp_path), 1024)
    first = prompt.split("\n", 1)[0]
    assert first == (
        "F=checkout D=.ralph/checkout P=.ralph/checkout/prd.json G=.ralph/checkout/progress.txt I=7 T=S-3 "
        "again .ralph/checkout/prd.json"
    )


def test_a_parallel_loops_slot_and_ports_are_placeholders_and_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = "slot {{slot}}, ports from {{port_base}}"
    monkeypatch.delenv("RALPH_SLOT", raising=False)
    monkeypatch.delenv("RALPH_PORT_BASE", raising=False)
    alone = build_prompt(template, parts(tmp_path), 1024)
    assert alone.startswith("slot 0, ports from 20000") and "other loops work beside" not in alone
    monkeypatch.setenv("RALPH_SLOT", "2")
    monkeypatch.setenv("RALPH_PORT_BASE", "20200")
    monkeypatch.setenv("RALPH_PORT_COUNT", "100")
    beside = build_prompt(template, parts(tmp_path), 1024)
    assert beside.startswith("slot 2, ports from 20200")
    assert "use ports 20200-20299 ($RALPH_PORT_BASE, $RALPH_PORT_COUNT); this loop's slot is 2" in beside


def test_default_template_leaves_no_placeholder(tmp_path: Path) -> None:
    prompt = build_prompt(default_template(), parts(tmp_path), 1024)
    assert "{{" not in prompt
    assert ".ralph/checkout/prd.json" in prompt
    assert ".ralph/checkout/progress.txt" in prompt


@pytest.mark.parametrize("kind", ["prd", "todo"])
def test_a_configured_promise_is_the_one_the_prompt_names(tmp_path: Path, kind: str) -> None:
    """config `completion.promise`: the built-in templates (and a prompt.md `ralph init` wrote from them, and the
    words a format adds to the task) name the default; the agent is told the configured one, everywhere."""
    task = "## Current task\nWhen no box is left, end your reply with `<promise>COMPLETE</promise>`."
    template = default_template(kind) + "\nOr say {{promise}}."
    prompt = build_prompt(template, parts(tmp_path, task_section=task, promise="<promise>SHIPPED</promise>"), 1024)
    assert "<promise>COMPLETE</promise>" not in prompt
    assert prompt.count("<promise>SHIPPED</promise>") == 3
    assert "Or say <promise>COMPLETE</promise>." in build_prompt(template, parts(tmp_path), 1024)  # the default


def test_task_section_and_notes_are_included(tmp_path: Path) -> None:
    notes = ("the last iteration claimed completion but S-3 does not pass", "second note")
    prompt = build_prompt("Template", parts(tmp_path, notes=notes), 1024)
    assert "## Current story: S-3 - Pay by card" in prompt
    assert "Note from ralph: the last iteration claimed completion but S-3 does not pass" in prompt
    assert "Note from ralph: second note" in prompt
    assert prompt.index("Template") < prompt.index("## Current story") < prompt.index("Note from ralph")
    assert prompt.endswith("\n")


def test_no_progress_section_without_a_progress_file(tmp_path: Path) -> None:
    prompt = build_prompt("Template", parts(tmp_path), 1024)
    assert "Recent progress" not in prompt


def test_small_progress_is_included_whole(tmp_path: Path) -> None:
    text = progress_file(tmp_path / "progress.txt", 2)
    prompt = build_prompt("Template", parts(tmp_path), 16 * 1024)
    assert "## Recent progress (the whole file)" in prompt
    assert text.strip("\n") in prompt


def test_large_progress_points_to_the_full_log(tmp_path: Path) -> None:
    progress_file(tmp_path / "progress.txt", 200)
    prompt = build_prompt("Template", parts(tmp_path), 2048)
    assert "the newest entries; the full log is .ralph/checkout/progress.txt" in prompt
    assert "Iteration: 200" in prompt
    assert "Iteration: 1\n" not in prompt


def test_prompt_size_does_not_grow_with_progress_beyond_the_budget(tmp_path: Path) -> None:
    budget = 16 * 1024
    path = tmp_path / "progress.txt"
    sizes = []
    for target in (30 * 1024, 60 * 1024):
        count = 1
        while len(progress_file(path, count).encode()) < target:
            count += 1
        sizes.append(len(build_prompt(default_template(), parts(tmp_path), budget).encode()))
    small, large = sizes
    assert large <= 1.25 * small
    assert large <= len(default_template().encode()) + budget + 1024


# ---------------------------------------------------------------- load_template


def test_load_template_none_is_the_default() -> None:
    assert load_template(None, "x") == default_template()
    assert "{{prd}}" in default_template()


def test_load_template_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text("My template {{task_id}}\n")
    assert load_template(str(path), "-p prompt.md") == "My template {{task_id}}\n"


def test_load_template_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(RalphError) as caught:
        load_template(str(tmp_path / "nope.md"), "-p nope.md")
    assert str(caught.value) == "-p nope.md: prompt file not found"


def test_load_template_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(RalphError) as caught:
        load_template(str(path), ".ralph/f/prompt.md")
    assert str(caught.value).startswith(".ralph/f/prompt.md: ")
    assert "UTF-8" in str(caught.value)


def test_load_template_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RalphError) as caught:
        load_template(str(tmp_path), "-p dir")
    assert str(caught.value).startswith("-p dir: ")
