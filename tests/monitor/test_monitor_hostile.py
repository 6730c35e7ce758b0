"""The monitor's views on hostile state files (fixture copies, rendered by a real rich Console)."""

from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from ralphloop.monitor.snapshot import read_snapshot
from ralphloop.monitor.views import dashboard
from ralphloop.project.paths import FeaturePaths
from tests.monitor_feature import copy_feature, edit

NOW = datetime(2026, 11, 21, 2, 37, 0, tzinfo=UTC)


def render(folder: Path) -> str:
    snapshot = read_snapshot(FeaturePaths(str(folder.parent.parent), str(folder)), NOW)
    console = Console(file=io.StringIO(), width=120, height=40, color_system=None, highlight=False)
    console.print(dashboard(snapshot))
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def test_an_event_time_out_of_range_does_not_crash_the_dashboard(tmp_path: Path) -> None:
    folder = copy_feature(tmp_path)
    with open(folder / "events.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"time": "9999-12-31T23:59:59-10:00", "level": "info", "text": "late event"}) + "\n")
    assert "late event" in render(folder)


def test_the_log_name_is_never_read_as_markup(tmp_path: Path) -> None:
    folder = copy_feature(tmp_path)
    odd = folder / "logs" / "iteration[red]2.log"
    os.rename(folder / "logs" / "iteration-2.log", odd)
    edit(folder / "status.json", logFile=str(odd))
    assert "iteration[red]2.log" in render(folder)


def test_the_model_name_is_never_read_as_markup(tmp_path: Path) -> None:
    folder = copy_feature(tmp_path)
    edit(folder / "status.json", model="claude-x[/]")
    assert "claude-x[/]" in render(folder)


def test_a_cost_that_is_not_a_number_does_not_crash_the_dashboard(tmp_path: Path) -> None:
    folder = copy_feature(tmp_path)
    edit(folder / "status.json", costUsd="0.42", tokensUsed="1200")
    assert "ralph monitor" in render(folder)


def test_deeply_nested_json_from_an_agent_never_crashes_a_reader(tmp_path: Path) -> None:
    """json.loads raises RecursionError, not ValueError, past ~1000 levels: every reader of agent-written
    JSON treats it as malformed."""
    from ralphloop.agents.claude.activity import readable_lines
    from ralphloop.agents.claude.parser import StreamJsonParser
    from ralphloop.analysis.json_result import parse_result
    from ralphloop.files.read import read_json_object
    from ralphloop.monitor.snapshot import read_recent

    deep = '{"type": "assistant", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    assert readable_lines(deep) is None
    parser = StreamJsonParser()
    parser.feed(deep.encode() + b"\n")
    (tmp_path / "deep.json").write_text(deep)
    assert read_json_object(tmp_path / "deep.json") is None
    assert read_recent(str(tmp_path / "deep.json"), 5) == []
    assert parse_result('{"status": ' + "[" * 5000 + "]" * 5000 + "}")[0] is None
