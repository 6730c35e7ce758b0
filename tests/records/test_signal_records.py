"""signals.jsonl (records/signal_log.py) and .exit_signals (records/exit_signals.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.analysis.signals import SignalRecord
from ralphloop.cli.signal_cmd import build_record
from ralphloop.core.errors import RalphError
from ralphloop.records.exit_signals import KEEP, ExitSignals, write_response_analysis
from ralphloop.records.signal_log import append_signal, clean, parse_line, read_new, size


def test_append_then_read_what_came_after_the_offset(tmp_path: Path) -> None:
    path = str(tmp_path / "signals.jsonl")
    append_signal(path, SignalRecord("learn", 1, text="old"), "2026-01-01T00:00:00Z")
    offset = size(path)
    append_signal(path, SignalRecord("blocked", 2, text="no creds"), "2026-01-01T00:00:01Z")
    append_signal(path, SignalRecord("done", None, id="S-1"), "2026-01-01T00:00:02Z")
    append_signal(path, SignalRecord("fail", 3, id="S-2", text="other iteration"), "2026-01-01T00:00:03Z")
    new = read_new(path, offset, 2)
    assert new.records == (SignalRecord("blocked", 2, text="no creds"), SignalRecord("done", None, id="S-1"))
    assert new.problems == ()
    line = json.loads(Path(path).read_text().splitlines()[0])
    assert line == {
        "schema_version": 1,
        "at": "2026-01-01T00:00:00Z",
        "iteration": 1,
        "signal": "learn",
        "id": None,
        "text": "old",
    }


def test_a_missing_file_has_no_records(tmp_path: Path) -> None:
    assert read_new(str(tmp_path / "none.jsonl"), 0, 1).records == ()
    assert size(str(tmp_path / "none.jsonl")) == 0


def test_a_file_that_shrank_is_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "signals.jsonl"
    path.write_text(json.dumps({"signal": "complete", "iteration": 4}) + "\n")
    assert read_new(str(path), 10_000, 4).records == (SignalRecord("complete", 4),)


def test_malformed_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "signals.jsonl"
    lines = [
        "not json",
        json.dumps({"signal": "explode"}),
        json.dumps({"signal": "done", "iteration": "4"}),
        json.dumps(["done"]),
        json.dumps({"signal": "done", "iteration": 4, "id": "S-1"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    new = read_new(str(path), 0, 4)
    assert new.records == (SignalRecord("done", 4, id="S-1"),)
    assert len(new.problems) == 4
    assert all(problem.startswith("signals.jsonl: ignored a malformed line") for problem in new.problems)


def test_parse_line_cleans_text() -> None:
    record = parse_line(json.dumps({"signal": "learn", "text": "use \x1b[31mred\x1b[0m\n  cents"}).encode())
    assert record == SignalRecord("learn", None, text="use red cents")


def test_clean_bounds_and_flattens() -> None:
    assert clean("a\n\tb\x07") == "a b"
    assert len(clean("x" * 10_000)) == 2000


@pytest.mark.parametrize(
    ("kind", "words", "expected"),
    [
        ("complete", [], SignalRecord("complete", 7)),
        ("complete", ["all", "green"], SignalRecord("complete", 7, text="all green")),
        ("blocked", ["no", "creds"], SignalRecord("blocked", 7, text="no creds")),
        ("fail", ["S-2"], SignalRecord("fail", 7, id="S-2")),
        ("fail", ["S-2", "tests", "fail"], SignalRecord("fail", 7, id="S-2", text="tests fail")),
        ("done", ["S-2"], SignalRecord("done", 7, id="S-2")),
        ("learn", ["use", "cents"], SignalRecord("learn", 7, text="use cents")),
    ],
)
def test_build_record(kind: str, words: list[str], expected: SignalRecord) -> None:
    assert build_record(kind, words, 7) == expected


@pytest.mark.parametrize(
    ("kind", "words", "message"),
    [
        ("done", [], "signal done: an id is required"),
        ("fail", [""], "signal fail: an id is required"),
        ("blocked", [], "signal blocked: text is required"),
        ("learn", [], "signal learn: text is required"),
        ("done", ["S-1", "S-2"], "signal done: one id only"),
    ],
)
def test_build_record_usage_errors(kind: str, words: list[str], message: str) -> None:
    with pytest.raises(RalphError, match=message):
        build_record(kind, words, None)


# ---------------------------------------------------------------- .exit_signals


def test_exit_signals_record_and_bound(tmp_path: Path) -> None:
    path = str(tmp_path / ".exit_signals")
    signals = ExitSignals.load(path)
    for iteration in range(1, 16):
        signals.record(iteration, test_only_loops=iteration % 2 == 0, done_signals=True, blocked_loops=False)
        signals.refuse(iteration, f"reason {iteration}", "2026-01-01T00:00:00Z")
    signals.save(path)
    data = json.loads(Path(path).read_text())
    assert data["schema_version"] == 1
    assert data["done_signals"] == list(range(16 - KEEP, 16))
    assert data["test_only_loops"] == [2, 4, 6, 8, 10, 12, 14]
    assert data["blocked_loops"] == []
    assert len(data["refused_claims"]) == KEEP
    assert data["refused_claims"][-1] == {"iteration": 15, "reason": "reason 15", "at": "2026-01-01T00:00:00Z"}
    assert ExitSignals.load(path) == signals


def test_exit_signals_survive_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / ".exit_signals"
    path.write_text('{"done_signals": "many", "blocked_loops": [1, "x", 3], "refused_claims": 5}')
    signals = ExitSignals.load(str(path))
    assert signals.done_signals == [] and signals.blocked_loops == [1, 3] and signals.refused_claims == []


def test_response_analysis_holds_every_field(tmp_path: Path) -> None:
    path = tmp_path / ".response_analysis"
    write_response_analysis(str(path), 3, "2026-01-01T00:00:00Z", {"confidence": 100, "signals": ["promise"]}, x=1)
    data = json.loads(path.read_text())
    assert data == {
        "schema_version": 1,
        "writer": "ralphloop",  # its name is frankbria's too (project/owner.py)
        "iteration": 3,
        "analyzed_at": "2026-01-01T00:00:00Z",
        "confidence": 100,
        "signals": ["promise"],
        "loop": {"x": 1},
    }
