"""events.jsonl: the monitor's recent events, written by a sink and read back by its tail."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ralphloop.agents.claude.activity import readable_lines
from ralphloop.core.events import (
    AgentOutput,
    CircuitChanged,
    IterationFinished,
    Notice,
    Waiting,
)
from ralphloop.core.exitcodes import ExitReason
from ralphloop.monitor.snapshot import read_recent
from ralphloop.records.events import EventLog, describe
from tests.events import iteration_finished, iteration_started, loop_ended, result, run_started

NOW = datetime(2026, 11, 21, 2, 0, 0, tzinfo=UTC)


def finished(status: str, *, failed: bool = False, error: str | None = None, files: int = 2) -> IterationFinished:
    return iteration_finished(
        number=5,
        task_id="S-2",
        status=status,
        result=result(exit_code=1 if failed else 0, failed=failed, error=error),
        files_changed=tuple(f"f{n}.py" for n in range(files)),
        done=1,
        total=3,
    )


def test_describe_names_each_notable_event() -> None:
    run = run_started()
    assert describe(run) == ("info", "run started: claude, up to 20 iterations, 1/3 done")
    started = iteration_started(number=5, max_iterations=None, task_id="S-2", task_title="Add the flag")
    assert describe(started) == ("info", "iteration 5 started: S-2 Add the flag (this run: 0 counted so far)")
    first = iteration_started(number=1, task_id="S-2", task_title="Add the flag")
    assert describe(first) == ("info", "iteration 1 started: S-2 Add the flag (1 of 20)")
    assert describe(finished("complete")) == ("ok", "S-2 done · 2 files changed · 1/3 done")
    assert describe(finished("in-progress", files=1)) == ("info", "S-2 still open · 1 file changed · 1/3 done")
    assert describe(finished("failed", failed=True, error="exit code 1", files=0)) == (
        "fail",
        "S-2: agent failed: exit code 1 · 1/3 done",
    )
    assert describe(Notice("warning", "dirty tree")) == ("warn", "dirty tree")
    assert describe(CircuitChanged("CLOSED", "OPEN", "no progress")) == ("fail", "circuit CLOSED → OPEN: no progress")
    ended = loop_ended(ExitReason.MAX_ITERATIONS, message="20 iterations done")
    assert describe(ended) == ("fail", "run ended (max_iterations): 20 iterations done")
    interrupted = loop_ended(ExitReason.INTERRUPTED, message="interrupted")
    assert describe(interrupted)[0] == "warn"  # type: ignore[index]


def test_only_the_first_tick_of_a_wait_and_no_agent_output_are_logged() -> None:
    first = Waiting("rate limit", "100 calls", NOW, 60.0, first=True)
    assert describe(first) is not None and "rate limit" in describe(first)[1]  # type: ignore[index]
    assert describe(Waiting("rate limit", "100 calls", NOW, 59.0)) is None
    assert describe(AgentOutput("stdout", b"hello")) is None


def test_the_log_is_appended_cleaned_and_redacted(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path), lambda: NOW, secrets=[b"hunter2-secret-value"])
    log(Notice("warning", "token hunter2-secret-value and \x1b[2Jsk-ant-api03-abcdefghijklmnop\nnext line"))
    log(AgentOutput("stdout", b"not logged"))
    log(Notice("info", "second"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {
        "time": "2026-11-21T02:00:00Z",
        "level": "warn",
        "text": "token [REDACTED] and [REDACTED] next line",
    }
    assert [item["text"] for item in read_recent(str(path), 10)] == [lines[0]["text"], "second"]
    assert read_recent(str(path), 1) == [{"time": "2026-11-21T02:00:00Z", "level": "info", "text": "second"}]


def test_a_big_log_is_rotated_when_a_run_starts(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("x" * 100 + "\n")
    EventLog(str(path), lambda: NOW, max_bytes=50)(run_started(feature_dir="/f", done=0))
    assert (tmp_path / "events.jsonl.1").read_text() == "x" * 100 + "\n"
    assert "run started" in path.read_text()


def test_an_unwritable_log_never_stops_the_loop(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path / "missing" / "events.jsonl"), lambda: NOW)
    log(Notice("info", "hello"))
    assert log.failed


def test_read_recent_skips_junk_and_a_cut_first_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = [json.dumps({"time": "t", "level": "ok", "text": f"event {n}"}) for n in range(3)]
    path.write_text("\n".join(["{broken", "[]", '{"text": 5}', *good]) + "\n")
    assert [item["text"] for item in read_recent(str(path), 10)] == ["event 0", "event 1", "event 2"]
    assert [item["text"] for item in read_recent(str(path), 10, tail_bytes=60)] == ["event 2"]
    assert read_recent(str(tmp_path / "none.jsonl"), 5) == []


def test_stream_json_lines_read_as_words_and_tools() -> None:
    assistant = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "text", "text": "Plan:\n\nstep one"},
                {"type": "tool_use", "name": "Write", "input": {"file_path": "a.py"}},
                {"type": "tool_use", "name": "TodoWrite", "input": {}},
            ]
        },
    }
    assert readable_lines(json.dumps(assistant)) == ["Plan:", "step one", "⚙ Write: a.py", "⚙ TodoWrite"]
    result = {"type": "result", "subtype": "success", "total_cost_usd": 0.5}
    assert readable_lines(json.dumps(result)) == ["■ result: success · $0.50"]
    failed = {"type": "result", "subtype": "success", "is_error": True, "result": "Invalid API key · Please run /login"}
    assert readable_lines(json.dumps(failed)) == ["■ result: error: Invalid API key · Please run /login"]
    assert readable_lines(json.dumps({"type": "system", "subtype": "init"})) == []
    assert readable_lines("plain text") is None
    assert readable_lines("{not json") is None
    assert readable_lines('{"no": "type"}') is None


def test_a_wait_line_holds_its_kind_and_end_for_the_reports_timeline(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path), lambda: NOW, secrets=[])
    until = datetime(2026, 11, 21, 7, 0, 0, tzinfo=UTC)
    log(Waiting("usage limit", "Claude AI usage limit reached", until, 18000.0, first=True))
    log(Waiting("usage limit", "Claude AI usage limit reached", until, 17999.0))  # a tick: not logged
    log(Waiting("usage limit", "Claude AI usage limit reached", until, 0.0, done=True))
    [line] = [json.loads(text) for text in path.read_text().splitlines()]
    assert line["wait"] == {"kind": "usage limit", "until": "2026-11-21T07:00:00Z"}
    assert (line["time"], line["level"]) == ("2026-11-21T02:00:00Z", "warn")
    assert read_recent(str(path), 5) == [{"time": line["time"], "level": "warn", "text": line["text"]}]  # the monitor's
