"""files/schemas.py: the one place the JSON files' shapes live; writers go through `dump`, readers through `load`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.files.schemas import BREAKER, METRICS_LINE, STATE, STATUS
from ralphloop.guards.breaker import Breaker
from ralphloop.records.metrics import metrics_line
from ralphloop.records.status import LiveStatus
from ralphloop.state.runstate import RunState
from tests.events import result

NOW = datetime(2026, 11, 25, 3, 0, 0, tzinfo=UTC)


def test_every_writer_writes_exactly_its_schema_in_order(tmp_path: Path) -> None:
    assert list(LiveStatus(str(tmp_path / "s.json")).to_json(NOW)) == list(STATUS.fields)
    assert list(RunState().to_json()) == list(STATE.fields)
    assert list(Breaker().to_json(0)) == list(BREAKER.fields)
    line = metrics_line(
        iteration=1, timestamp="t", task_id="S-1", outcome="complete", agent="a", result=result(), files_changed=0
    )
    assert list(line) == list(METRICS_LINE.fields)


def test_the_files_on_disk_carry_their_schema_version(tmp_path: Path) -> None:
    status = LiveStatus(str(tmp_path / "status.json"))
    status.write(NOW)
    RunState().save(str(tmp_path / "state.json"))
    for name, schema in (("status.json", STATUS), ("state.json", STATE)):
        body = json.loads((tmp_path / name).read_text())
        assert next(iter(body)) == "schema_version" and body["schema_version"] == schema.version


def test_dump_refuses_a_field_of_the_wrong_type_or_an_unknown_one() -> None:
    with pytest.raises(ValueError, match=r"status\.json: iteration is str, expected an integer"):
        STATUS.dump({"iteration": "3"})
    with pytest.raises(ValueError, match="unknown field"):
        STATUS.dump({"iterations": 3})
    with pytest.raises(ValueError, match="bool"):
        STATUS.dump({"iteration": True})  # JSON's true is not a number, whatever Python says


def test_load_gives_every_field_its_kind_or_its_default_whatever_the_file_holds() -> None:
    hostile = {"iteration": "7", "status": ["x"], "costUsd": 1.5, "storiesTotal": True, "extra": 1, "waiting": 3}
    loaded = STATUS.load(hostile)
    assert list(loaded) == list(STATUS.fields)
    assert (loaded["iteration"], loaded["status"], loaded["costUsd"], loaded["storiesTotal"]) == (
        0,
        "not started",
        1.5,
        0,
    )
    assert loaded["waiting"] is None and "extra" not in loaded
    assert STATUS.load(None)["circuitState"] == "CLOSED"


def test_a_strict_reader_names_the_first_wrong_field() -> None:
    assert METRICS_LINE.problem({"duration_seconds": 1.0, "success": True}) == '"iteration" is missing'
    assert METRICS_LINE.problem({"iteration": None, "duration_seconds": 1.0, "success": True}) == '"iteration" is null'
    bad = {"iteration": 1, "duration_seconds": 1.0, "success": True, "model": 3}
    assert METRICS_LINE.problem(bad) == '"model" is an integer, expected a string'
    assert METRICS_LINE.problem({"iteration": 1, "duration_seconds": 1, "success": False}) is None
