"""state.json: RunState round trip, numbering after existing logs, and corrupt files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.files.store import SCHEMA_VERSION
from ralphloop.state.runstate import LastOutcome, RunState, highest_log_number


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    return folder


def touch_logs(logs: Path, *names: str) -> None:
    for name in names:
        (logs / name).write_text("")


def full_state() -> RunState:
    return RunState(
        iteration=4,
        current_task="S-2",
        retry_count=1,
        completed_ids=["S-1", "S-0"],
        last_outcome=LastOutcome(
            iteration=4,
            task_id="S-2",
            status="failed",
            exit_code=3,
            error="exit code 3: boom",
            at="2026-01-01T00:00:04Z",
        ),
        next_prompt_notes=["your last completion claim was refused: 1 task(s) still do not pass: S-2"],
        streaks={"blocked": 2, "test_only": 0, "question_only": 1},
        last_exit_reason="max_iterations",
        updated_at="2026-01-01T00:00:05Z",
    )


def test_round_trip(tmp_path: Path, logs: Path) -> None:
    path = tmp_path / "state.json"
    state = full_state()
    state.save(str(path))
    assert RunState.load(str(path), str(logs)) == state
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION


def test_round_trip_of_the_empty_state(tmp_path: Path, logs: Path) -> None:
    path = tmp_path / "state.json"
    RunState().save(str(path))
    assert RunState.load(str(path), str(logs)) == RunState()


def test_missing_file_starts_after_the_highest_log(tmp_path: Path, logs: Path) -> None:
    touch_logs(
        logs,
        "iteration-3.log",
        "iteration-12.log",
        "iteration-7.log",
        "iteration-40.prompt.md",
        "iteration-x.log",
        "iteration-99.log.bak",
        "notes.log",
    )
    state = RunState.load(str(tmp_path / "state.json"), str(logs))
    assert state.iteration == 12
    assert state.completed_ids == []
    assert state.last_outcome is None


def test_missing_file_and_missing_logs_start_at_zero(tmp_path: Path) -> None:
    assert RunState.load(str(tmp_path / "state.json"), str(tmp_path / "no-logs")) == RunState()


def test_saved_iteration_below_the_logs_is_raised(tmp_path: Path, logs: Path) -> None:
    path = tmp_path / "state.json"
    RunState(iteration=2, completed_ids=["S-1"]).save(str(path))
    touch_logs(logs, "iteration-9.log")
    state = RunState.load(str(path), str(logs))
    assert state.iteration == 9
    assert state.completed_ids == ["S-1"]


def test_other_schema_version_starts_afresh(tmp_path: Path, logs: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"schema_version": 99, "iteration": 50, "completed_ids": ["S-1"]}))
    touch_logs(logs, "iteration-5.log")
    assert RunState.load(str(path), str(logs)) == RunState(iteration=5)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{",
        "not json at all",
        "[1, 2, 3]",
        "null",
        '"text"',
        '{"schema_version": 1, "iteration": "abc"}',
        '{"schema_version": 1, "iteration": null}',
        '{"schema_version": 1, "iteration": [1]}',
        '{"schema_version": 1, "iteration": NaN}',
        '{"schema_version": 1, "iteration": Infinity}',
        '{"schema_version": 1, "retry_count": -Infinity}',
        '{"schema_version": 1, "completed_ids": 5}',
        '{"schema_version": 1, "last_outcome": {"bogus": 1}}',
        '{"schema_version": 1, "last_outcome": {"iteration": 1}}',
    ],
)
def test_corrupt_file_does_not_crash(tmp_path: Path, logs: Path, content: str) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    touch_logs(logs, "iteration-6.log")
    state = RunState.load(str(path), str(logs))
    assert state.iteration == 6


def test_binary_garbage_does_not_crash(tmp_path: Path, logs: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"\x00\xff\xfe\x89PNG\r\n")
    assert RunState.load(str(path), str(logs)) == RunState()


def test_highest_log_number(logs: Path, tmp_path: Path) -> None:
    assert highest_log_number(str(logs)) == 0
    assert highest_log_number(str(tmp_path / "absent")) == 0
    touch_logs(logs, "iteration-2.log", "iteration-10.log", "iteration-9.log")
    assert highest_log_number(str(logs)) == 10
