"""state/circuit.py: .circuit_breaker_state (load/save) and .circuit_breaker_history (bounded, always valid)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.files.store import SCHEMA_VERSION
from ralphloop.guards.breaker import HISTORY_KEEP, Breaker, CircuitState, Transition
from ralphloop.state.circuit import append_history, load_breaker, read_history, save_breaker

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
LABEL = ".ralph/feat/.circuit_breaker_state"


def transition(loop: int) -> Transition:
    return Transition(T0 + timedelta(minutes=loop), loop, CircuitState.CLOSED, CircuitState.HALF_OPEN, f"r{loop}")


def a_breaker() -> Breaker:
    return Breaker(
        state=CircuitState.OPEN,
        no_progress=3,
        same_error=1,
        failures=2,
        denial_streak=1,
        last_fingerprint="fp",
        last_error="boom",
        denied=("Bash(git push)",),
        reason="no progress in 3 iterations in a row",
        last_change=T0,
        opened_at=T0,
        last_progress_iteration=4,
        total_opens=2,
        probation=False,
    )


# ---------------------------------------------------------------- the state file


def test_a_missing_state_file_reads_as_a_closed_breaker(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_state"
    assert load_breaker(str(path), LABEL) == Breaker()
    assert not path.exists()  # loading does not create it


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    path = str(tmp_path / ".circuit_breaker_state")
    breaker = a_breaker()
    save_breaker(path, breaker, 7)
    assert load_breaker(path, LABEL) == breaker
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["state"] == "OPEN"
    assert data["current_loop"] == 7
    assert data["consecutive_no_progress"] == 3


def test_save_replaces_the_previous_state(tmp_path: Path) -> None:
    path = str(tmp_path / ".circuit_breaker_state")
    save_breaker(path, a_breaker(), 7)
    save_breaker(path, Breaker(), 8)
    assert load_breaker(path, LABEL) == Breaker()
    assert os.listdir(tmp_path) == [".circuit_breaker_state"]  # no temp files left behind


def test_a_file_without_schema_version_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_state"
    path.write_text(json.dumps({"state": "HALF_OPEN", "consecutive_no_progress": 2}))
    breaker = load_breaker(str(path), LABEL)
    assert (breaker.state, breaker.no_progress) == (CircuitState.HALF_OPEN, 2)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[]",
        b'"OPEN"',
        b"null",
        b'{"state": "AJAR"}',
        b'{"consecutive_no_progress": 1}',
        b'{"state": "OPEN", "consecutive_failures": -2}',
        b'{"state": "OPEN", "denied_commands": "rm"}',
        b'{"state": "OPEN", "opened_at": "not a time"}',
        b'{"state": "OPEN", "opened_at": 12}',
        b'{"schema_version": 99, "state": "CLOSED"}',
        b'{"schema_version": "1", "state": "CLOSED"}',
        b'{"schema_version": null, "state": "CLOSED"}',
    ],
)
def test_a_damaged_state_file_is_an_error_naming_it_and_is_left_unchanged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / ".circuit_breaker_state"
    path.write_bytes(content)
    before = os.stat(path)
    with pytest.raises(RalphError) as caught:
        load_breaker(str(path), LABEL)
    assert LABEL in caught.value.message
    assert "ralph reset-circuit" in caught.value.message
    assert path.read_bytes() == content
    after = os.stat(path)
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    assert os.listdir(tmp_path) == [".circuit_breaker_state"]


def test_a_wrong_schema_version_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_state"
    path.write_text(json.dumps({"schema_version": 2, **Breaker().to_json(0)}))
    with pytest.raises(RalphError, match="schema_version 2"):
        load_breaker(str(path), LABEL)


def test_an_unreadable_state_path_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_state"
    path.mkdir()  # a folder is never read: the error says what is there
    with pytest.raises(RalphError) as caught:
        load_breaker(str(path), LABEL)
    assert caught.value.message.startswith(f"{LABEL}: not a regular file but a folder")


# ---------------------------------------------------------------- the history


def test_history_starts_with_the_first_append(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_history"
    assert read_history(str(path)) == []
    append_history(str(path), [])
    assert not path.exists()  # nothing to add, nothing written
    append_history(str(path), [transition(1)])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schema_version": SCHEMA_VERSION, "writer": "ralphloop", "transitions": [transition(1).to_json()]}
    assert read_history(str(path)) == [transition(1).to_json()]


def test_history_keeps_order_across_appends(tmp_path: Path) -> None:
    path = str(tmp_path / ".circuit_breaker_history")
    append_history(path, [transition(1), transition(2)])
    append_history(path, iter([transition(3)]))  # any iterable
    assert [item["loop"] for item in read_history(path)] == [1, 2, 3]


def test_history_keeps_only_the_newest_200_and_is_valid_json_after_each_append(tmp_path: Path) -> None:
    assert HISTORY_KEEP == 200
    path = tmp_path / ".circuit_breaker_history"
    for loop in range(1, 261):
        append_history(str(path), [transition(loop)])
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["schema_version"] == SCHEMA_VERSION
        loops = [item["loop"] for item in data["transitions"]]
        assert loops == list(range(max(1, loop - 199), loop + 1))
    assert len(read_history(str(path))) == 200
    assert read_history(str(path))[0] == transition(61).to_json()
    assert read_history(str(path))[-1] == transition(260).to_json()
    assert os.listdir(tmp_path) == [".circuit_breaker_history"]


def test_one_big_append_is_bounded_too(tmp_path: Path) -> None:
    path = str(tmp_path / ".circuit_breaker_history")
    append_history(path, [transition(0)])
    append_history(path, [transition(loop) for loop in range(1, 451)])
    loops = [item["loop"] for item in read_history(path)]
    assert loops == list(range(251, 451))


@pytest.mark.parametrize(
    "content",
    [b"", b"{broken", b"\xff\xfe", b"null", b"42", b'"text"', b'{"transitions": "nope"}', b'{"other": []}'],
)
def test_a_damaged_history_reads_as_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / ".circuit_breaker_history"
    path.write_bytes(content)
    assert read_history(str(path)) == []


def test_read_history_skips_entries_that_are_not_objects(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_history"
    good = transition(1).to_json()
    path.write_text(json.dumps({"schema_version": 1, "transitions": [good, 3, "x", None, [good], good]}))
    assert read_history(str(path)) == [good, good]


def test_read_history_accepts_a_bare_list(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_history"
    good = transition(1).to_json()
    path.write_text(json.dumps([good, "junk"]))
    assert read_history(str(path)) == [good]


def test_read_history_on_a_directory_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_history"
    path.mkdir()
    assert read_history(str(path)) == []


def test_appending_to_a_damaged_history_starts_it_again(tmp_path: Path) -> None:
    path = tmp_path / ".circuit_breaker_history"
    path.write_bytes(b"{half a file")
    append_history(str(path), [transition(5)])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schema_version": SCHEMA_VERSION, "writer": "ralphloop", "transitions": [transition(5).to_json()]}
