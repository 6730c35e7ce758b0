"""progress.txt records: the seed 003 entry shape, append-only writes, the header."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ralphloop.records.progress import (
    MAX_FILES_LISTED,
    ProgressEntry,
    append_entry,
    ensure_header,
    format_entry,
    header,
)


def make_entry(**changes: object) -> ProgressEntry:
    values: dict[str, object] = {
        "iteration": 3,
        "date": "2026-01-01T10:00:00Z",
        "story": "S-2 - Pay by card",
        "status": "passed",
        "files_changed": ["src/pay.py", "tests/test_pay.py"],
        "learnings": ["the card API needs a nonce"],
        "commit": "abc1234",
        "agent": "claude",
    }
    values.update(changes)
    return ProgressEntry(**values)  # type: ignore[arg-type]


def test_format_entry_has_the_seed_003_shape() -> None:
    text = format_entry(make_entry())
    assert text == (
        "\n---\n"
        "Iteration: 3\n"
        "Date: 2026-01-01T10:00:00Z\n"
        "Story: S-2 - Pay by card\n"
        "Status: passed\n"
        "Files Changed:\n"
        "  - src/pay.py\n"
        "  - tests/test_pay.py\n"
        "Learnings:\n"
        "  - the card API needs a nonce\n"
        "Commit: abc1234\n"
        "Agent: claude\n"
    )


def test_format_entry_field_order() -> None:
    lines = format_entry(make_entry(notes=("claimed complete early",))).splitlines()
    labels = ["---", "Iteration:", "Date:", "Story:", "Status:", "Files Changed:", "Learnings:", "Commit:", "Agent:"]
    positions = [next(i for i, line in enumerate(lines) if line.startswith(label)) for label in labels]
    assert positions == sorted(positions)
    assert lines[-1] == "Note: claimed complete early"


def test_format_entry_without_files_learnings_or_commit() -> None:
    text = format_entry(make_entry(files_changed=[], learnings=[], commit=None))
    assert "Files Changed: (none)\n" in text
    assert "Learnings:" not in text
    assert "Commit: (none)\n" in text


def test_file_list_is_capped_with_a_count_of_the_rest() -> None:
    files = [f"src/file_{n:03d}.py" for n in range(MAX_FILES_LISTED + 7)]
    lines = format_entry(make_entry(files_changed=files)).splitlines()
    listed = [line for line in lines if line.startswith("  - src/")]
    assert listed == [f"  - {name}" for name in files[:MAX_FILES_LISTED]]
    assert "  - ... and 7 more" in lines


def test_file_list_at_the_cap_has_no_count() -> None:
    files = [f"f{n}" for n in range(MAX_FILES_LISTED)]
    text = format_entry(make_entry(files_changed=files))
    assert "more" not in text
    assert f"  - f{MAX_FILES_LISTED - 1}\n" in text


def test_append_entry_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    append_entry(str(path), make_entry())
    assert path.read_text() == format_entry(make_entry())


def test_append_entry_keeps_existing_content(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    before = header("feat", "2026-01-01") + "\n## Iteration 1\nthe agent wrote this\n"
    path.write_text(before)
    append_entry(str(path), make_entry())
    assert path.read_text() == before + format_entry(make_entry())


def test_append_entry_adds_a_newline_when_the_file_lacks_one(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    path.write_text("the agent forgot the final newline")
    append_entry(str(path), make_entry())
    assert path.read_text() == "the agent forgot the final newline\n" + format_entry(make_entry())


def test_append_entry_to_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    path.write_text("")
    append_entry(str(path), make_entry())
    assert path.read_text() == format_entry(make_entry())


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(st.lists(st.text(max_size=80), max_size=5))
def test_appends_never_truncate(tmp_path: Path, agent_writes: list[str]) -> None:
    path = tmp_path / "progress.txt"
    path.write_text(header("feat", "2026-01-01"))
    for number, written in enumerate(agent_writes, start=1):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(written)
        before = path.read_bytes()
        append_entry(str(path), make_entry(iteration=number))
        after = path.read_bytes()
        assert after.startswith(before)
        assert after.endswith(format_entry(make_entry(iteration=number)).encode())
        separator = after[len(before) : len(after) - len(format_entry(make_entry(iteration=number)).encode())]
        assert separator == (b"" if before.endswith(b"\n") else b"\n")


def test_ensure_header_starts_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    ensure_header(str(path), "feat", "2026-01-01T00:00:00Z")
    assert path.read_text() == "# Progress Log: feat\n# Started: 2026-01-01T00:00:00Z\n"


def test_ensure_header_fills_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    path.write_text("")
    ensure_header(str(path), "feat", "2026-01-01T00:00:00Z")
    assert path.read_text() == header("feat", "2026-01-01T00:00:00Z")


def test_ensure_header_does_not_touch_a_non_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "progress.txt"
    path.write_text("notes the user wrote, no header")
    ensure_header(str(path), "feat", "2026-01-01T00:00:00Z")
    assert path.read_text() == "notes the user wrote, no header"
