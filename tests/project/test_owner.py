"""project/owner.py: ralph's runtime files told from another tool's by the same names in `.ralph/` (issue 31)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from ralphloop.project.owner import FRANKBRIA, OWN_FOLDER, is_ralphs, other_tool, others_files, state_folder
from ralphloop.records.status import LiveStatus
from ralphloop.state.runstate import RunState

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WILD = FIXTURES / "wild" / "fixplan"


def test_frankbrias_files_are_not_ralphs_and_name_their_tool(tmp_path: Path) -> None:
    shutil.copytree(WILD / "NoobyNull__vigilant-octo-train" / ".ralph", tmp_path / ".ralph")
    ralph_dir = str(tmp_path / ".ralph")

    assert others_files(ralph_dir) == [".circuit_breaker_state", "status.json", ".exit_signals"]
    assert other_tool(ralph_dir, ["status.json"]) == FRANKBRIA
    assert state_folder(ralph_dir) == os.path.join(ralph_dir, OWN_FOLDER)


def test_a_status_json_that_is_not_strict_json_is_theirs_too(tmp_path: Path) -> None:
    # a raw newline and colour codes in exit_reason: json.loads refuses it, frankbria's loop wrote it all the same
    shutil.copyfile(WILD / "STRRL__wonder-mesh-net" / ".ralph" / "status.json", tmp_path / "status.json")

    assert others_files(str(tmp_path)) == ["status.json"]
    os.unlink(tmp_path / "status.json")
    (tmp_path / ".call_count").write_text("1\n")
    assert other_tool(str(tmp_path), []) == FRANKBRIA


def test_ralphs_own_files_marked_or_from_an_older_ralph_are_ralphs(tmp_path: Path) -> None:
    LiveStatus(str(tmp_path / "status.json")).write(datetime(2026, 1, 1, tzinfo=UTC))
    RunState().save(str(tmp_path / "state.json"))
    for name in (".circuit_breaker_state", ".exit_signals"):  # an older ralph's, unmarked (tests/fixtures/previous/)
        shutil.copyfile(FIXTURES / "previous" / "feat" / name, tmp_path / name)
    older = json.loads((FIXTURES / "previous" / "feat" / "status.json").read_text())
    (tmp_path / ".response_analysis").write_text(json.dumps(older, indent=4))  # a hand edit: another indent

    assert json.loads((tmp_path / "status.json").read_text())["writer"] == "ralphloop"
    assert others_files(str(tmp_path)) == []
    assert state_folder(str(tmp_path)) == str(tmp_path)
    assert is_ralphs("status.json", {"iteration": 3, "circuitState": "OPEN"})  # ralph's camelCase fields
    assert not is_ralphs("status.json", {"loop_count": 3, "status": "running"})
    assert not is_ralphs(".circuit_breaker_state", {"schema_version": 1, "writer": "someone"})


def test_damaged_or_odd_files_are_left_to_ralphs_readers(tmp_path: Path) -> None:
    (tmp_path / "status.json").write_text('{"torn": ')  # not JSON: ralph's readers call it damaged
    (tmp_path / ".exit_signals").write_text("7")
    os.mkfifo(tmp_path / ".circuit_breaker_state")  # never blocks
    os.symlink(WILD / "STRRL__wonder-mesh-net" / ".ralph" / "status.json", tmp_path / ".response_analysis")

    assert others_files(str(tmp_path)) == []
    (tmp_path / OWN_FOLDER).mkdir()  # made once: kept, whatever is beside it
    assert state_folder(str(tmp_path)) == str(tmp_path / OWN_FOLDER)
