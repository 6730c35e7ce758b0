"""The monitor's views, rendered to text from fixture state files (tests/fixtures/monitor/)."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ralphloop.agents.log_tail import log_tail
from ralphloop.monitor.layout import share
from ralphloop.monitor.snapshot import Snapshot, read_snapshot, signal_counts
from ralphloop.monitor.views import WAITING_TEXT, dashboard, plain_line, summary_lines, summary_view
from ralphloop.project.paths import FeaturePaths
from tests.monitor_feature import FIXTURE, copy_feature, edit, held

NOW = datetime(2026, 11, 21, 2, 37, 0, tzinfo=UTC)


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    """A copy of the fixture feature inside a project, status.json pointing at the copy's log."""
    return copy_feature(tmp_path)


@pytest.fixture
def running(feature: Path) -> Iterator[Path]:
    """The feature's lock held, as by a live `ralph run`."""
    with held(feature):
        yield feature


def snapshot_of(folder: Path, now: datetime = NOW) -> Snapshot:
    return read_snapshot(FeaturePaths(str(folder.parent.parent), str(folder)), now)


def render(renderable: Any, *, colour: bool = False, width: int = 100, height: int = 25) -> str:
    console = Console(
        width=width,
        height=height,
        record=True,
        force_terminal=colour,
        color_system="standard" if colour else None,
        file=io.StringIO(),
    )
    console.print(renderable)
    return console.export_text(styles=colour)


def rows(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_running_dashboard_shows_every_fact(running: Path) -> None:
    text = render(dashboard(snapshot_of(running)))
    assert "ralph monitor · feat2 · claude · claude-sonnet-4-5-20250929" in text
    assert "Iteration  2 / 5" in text
    assert "Status     running" in text
    assert "STORY-002 - Add the CLI flag" in text
    assert "1/3 stories pass" in text
    assert "Calls      45/100 this hour" in rows(text)  # 55 slots free: when one frees does not matter yet
    assert "Circuit    CLOSED" in text
    assert "Signals    done 2 · completion 1 · test-only 1 · refused 1" in text
    assert "Spent      $1.23 · $2.00/h" in text  # 37 minutes since the run started
    assert "Tokens     123,456 tokens" in text
    assert "⚙ Bash: pytest -q tests/red" in text
    assert "Updated" not in text  # the run is alive: how fresh its file is says nothing
    # recent events with their (local) times; the malformed line is skipped
    first = datetime(2026, 11, 21, 2, 0, 0, tzinfo=UTC).astimezone()
    assert f"[{first:%H:%M:%S}] run started: claude, up to 5 iterations, 0/3 done" in text
    assert "STORY-001 done · 3 files changed · 1/3 done" in text
    assert "not json" not in text
    # the log's tail, stream-json turned into words and tools
    assert "Log · iteration-2.log" in text
    assert "I will add the --verbose flag." in text
    assert "⚙ Edit: src/cli.py" in text
    assert "✗ tool error: 1 failed" in text
    assert "[stderr] warning: slow test" in text


def test_hostile_text_never_reaches_the_screen_as_controls_or_markup(running: Path) -> None:
    text = render(dashboard(snapshot_of(running)), colour=True)
    assert "\x1b[2J" not in text and "\x1b]0;" not in text and "\x07" not in text and "pwned" not in text
    assert "\x1b[31mred" not in text  # the activity's own colour codes are gone
    assert "[bold red]markup[/]" in render(dashboard(snapshot_of(running)))  # shown, not obeyed


@pytest.mark.parametrize("key", ["status", "circuitState"])
def test_a_hostile_status_word_is_drawn_without_its_escapes(running: Path, key: str) -> None:
    """status.json and the breaker's file can be written by the agent: their words are cleaned like any other."""
    hostile = "x\x1b]0;PWNED\x07\x1b[2J"
    if key == "status":
        edit(running / "status.json", status=hostile)
    else:
        (running / ".circuit_breaker_state").write_text(json.dumps({"state": hostile}))
    for width, height in ((100, 40), (50, 20)):  # the full view and the compact one
        text = render(dashboard(snapshot_of(running)), colour=True, width=width, height=height)
        assert "\x1b]0;" not in text and "\x07" not in text and "\x1b[2J" not in text, text
    assert "[bold red]not markup[/]" in render(dashboard(snapshot_of(running)))


@pytest.mark.parametrize(
    ("state", "reason", "code"),
    [("CLOSED", "", "\x1b[32mCLOSED"), ("HALF_OPEN", "no progress in 2 iterations", "\x1b[33mHALF_OPEN")],
)
def test_circuit_state_is_coloured(running: Path, state: str, reason: str, code: str) -> None:
    edit(running / ".circuit_breaker_state", state=state, reason=reason)
    text = render(dashboard(snapshot_of(running)), colour=True)
    assert code in text
    assert "Execution halted" not in text
    if reason:
        assert reason in text


def test_open_circuit_is_red_with_its_reason_and_execution_halted(running: Path) -> None:
    edit(running / ".circuit_breaker_state", state="OPEN", reason="no progress in 3 iterations")
    edit(
        running / "status.json",
        status="circuit_open",
        exitReason="circuit_open",
        guidance="Check the last logs.\nThen run: ralph reset-circuit -f feat2",
    )
    coloured = render(dashboard(snapshot_of(running)), colour=True)
    assert "\x1b[1;31mOPEN" in coloured
    text = render(dashboard(snapshot_of(running)))
    assert "Circuit    OPEN - no progress in 3 iterations  Execution halted" in text
    assert "Then run: ralph reset-circuit -f feat2" in text


def test_waiting_for_a_limit_shows_a_countdown(running: Path) -> None:
    edit(
        running / "status.json",
        waiting={"kind": "rate limit", "message": "100 calls this hour", "until": "2026-11-21T02:42:30Z"},
    )
    text = render(dashboard(snapshot_of(running)))
    assert "⏳ 100 calls this hour · 05:30 left" in text
    assert "Status     waiting" in text  # any wait: not "running"
    assert "waiting: 100 calls this hour" in plain_line(snapshot_of(running))


def test_before_any_run_it_waits_for_ralph(tmp_path: Path) -> None:
    folder = tmp_path / "project" / ".ralph" / "feat2"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURE / "prd.json", folder)
    found = snapshot_of(folder)
    assert not found.started and not found.ended
    assert render(dashboard(found)).strip() == WAITING_TEXT == "Waiting for Ralph to start..."
    assert plain_line(found) == WAITING_TEXT


def test_a_finished_run_gets_the_completion_summary(feature: Path) -> None:
    edit(
        feature / "status.json",
        status="complete",
        exitReason="complete",
        exitMessage="every task is done",
        iteration=3,
        lastUpdated="2026-11-21T03:15:30Z",
    )
    edit(feature / "state.json", iteration=7)  # every run of the feature
    found = snapshot_of(feature)
    assert found.ended  # no lock held: the run is over
    lines = summary_lines(found.report or {})
    assert lines[0] == "Ralph has exited: complete"
    assert "Iteration:  7 · counted 3 of 5 this run" in lines
    assert "Duration:   1h15m30s" in lines
    assert "Exit:       complete - every task is done" in lines
    text = render(summary_view(found), colour=True)
    assert "\x1b[1;32m Ralph has exited: complete" in text


def test_a_run_killed_without_its_final_state_is_over_too(feature: Path) -> None:
    found = snapshot_of(feature)  # status says running, but nobody holds the lock
    assert found.ended
    assert found.report is not None and found.report["status"] == "stopped"


def test_plain_line_is_one_line_per_state(running: Path) -> None:
    line = plain_line(snapshot_of(running))
    assert line.startswith("iteration 2 / 5 · running · STORY-002 - Add the CLI flag")
    assert "1/3 done · calls 45/100 this hour · circuit CLOSED · ⚙ Bash: pytest -q tests/red" in line
    assert "\n" not in line and "\x1b" not in line


def test_broken_and_half_written_files_do_not_stop_the_monitor(running: Path) -> None:
    (running / ".exit_signals").write_text('{"done_signals": [1,')
    (running / "events.jsonl").write_bytes(b"\xff\xfe garbage\n{}\n[1]\n")
    (running / ".circuit_breaker_state").write_text("[]")
    (running / "prd.json").write_text("{")
    found = snapshot_of(running)
    assert found.signals == {}
    assert found.events == []
    text = render(dashboard(found))
    assert "Circuit    CLOSED" in text and "Status     running" in text
    assert "1/3 stories pass" in text  # the counts status.json last wrote


def test_an_unreadable_status_file_reads_as_no_run_yet(running: Path) -> None:
    (running / "status.json").write_text("not json")
    assert render(dashboard(snapshot_of(running))).strip() == WAITING_TEXT


def test_log_tail_reads_only_the_end_of_a_huge_log(tmp_path: Path) -> None:
    log = tmp_path / "iteration-1.log"
    with open(log, "w") as handle:
        handle.write("old line\n" * 200_000)
        handle.write("\n".join(f"line {n}" for n in range(30)) + "\n")
    assert log_tail(str(log), 3) == ["line 27", "line 28", "line 29"]
    assert log_tail(str(tmp_path / "missing.log"), 3) == []


def test_signal_counts_ignore_what_is_not_a_list() -> None:
    assert signal_counts({"done_signals": [1, 2], "blocked_loops": "x", "refused_claims": [{}]}) == {
        "done": 2,
        "refused": 1,
    }


def test_waiting_for_the_users_answer_is_yellow_and_not_running(running: Path) -> None:
    edit(
        running / "status.json",
        waiting={"kind": "answer", "message": "usage limit: wait or exit?", "until": "2026-11-21T02:37:22Z"},
    )
    text = render(dashboard(snapshot_of(running)))
    assert "Status     waiting" in text
    assert "⏳ usage limit: wait or exit? · waiting for your answer (00:22)" in text
    asked = {
        "kind": "answer",
        "message": "usage limit reached: waiting for your answer",
        "until": "2026-11-21T02:37:22Z",
    }
    edit(running / "status.json", waiting=asked)  # as the loop words it (asking.py)
    assert "⏳ usage limit reached: waiting for your answer (00:22)" in render(dashboard(snapshot_of(running)))
    edit(running / "status.json", waiting={**asked, "message": "usage limit: wait or exit?"})
    coloured = render(dashboard(snapshot_of(running)), colour=True)
    assert "\x1b[33m⏳ usage limit: wait or exit? · waiting for your answer (00:22)" in coloured
    assert "\x1b[33mwaiting" in coloured
    assert "running · STORY-002" not in plain_line(snapshot_of(running))
    assert plain_line(snapshot_of(running)).endswith(" · waiting for your answer")


def test_when_a_slot_frees_shows_only_when_every_slot_is_used(running: Path) -> None:
    edit(running / "status.json", apiCallsUsed=100)
    assert "Calls      100/100 this hour · a slot frees in 23:00" in render(dashboard(snapshot_of(running)))


def test_the_header_says_how_far_how_much_and_when(running: Path) -> None:
    edit(
        running / "status.json",
        storiesAtStart=0,
        inIteration=True,
        iterationsCounted=1,
        iterationStartedAt="2026-11-21T02:33:48Z",
        iterationTimeoutS=1800,
        lastOutputAt="2026-11-21T02:36:20Z",
        maxCostUsd=5.0,
    )
    text = render(dashboard(snapshot_of(running)))
    eta = datetime(2026, 11, 21, 3, 51, 0, tzinfo=UTC).astimezone()  # 37 min for 1 story, 2 left: 74 min from now
    started = datetime(2026, 11, 21, 2, 0, 0, tzinfo=UTC).astimezone()
    assert "Iteration  2 / 5 · 03:12 of 30:00 · last output 40s ago" in text
    assert f"1/3 stories pass · ETA ~{eta:%H:%M} (≈ 1h14m)" in text
    assert f"Elapsed    37m since {started:%H:%M}" in text
    assert "Spent      $1.23 of $5.00 · $2.00/h" in text
    coloured = render(dashboard(snapshot_of(running)), colour=True)
    assert "\x1b[32m━" in coloured  # the bar's done part green, not rich's error pink (\x1b[38;5;197m)
    assert "38;5;197" not in coloured


@pytest.mark.parametrize(("width", "height"), [(80, 24), (120, 40), (200, 50)])
def test_the_dashboard_fits_its_screen(running: Path, width: int, height: int) -> None:
    with open(running / "events.jsonl", "a", encoding="utf-8") as handle:
        for number in range(40):
            handle.write(json.dumps({"time": "2026-11-21T02:30:00Z", "level": "info", "text": f"event {number}"}))
            handle.write("\n")
    found = read_snapshot(FeaturePaths(str(running.parent.parent), str(running)), NOW, events=height, log_lines=height)
    text = render(dashboard(found, (width, height)), width=width, height=height)
    lines = text.splitlines()
    assert len(lines) == height and all(len(line) <= width for line in lines)
    assert lines[-1].startswith("╰")  # the log's box closed on the last line: nothing cut off below
    assert "event 39" in text and "[stderr] warning: slow test" in text  # the newest of each
    assert ("Calls" in text) == (height >= 30)  # a short screen leaves out what only says all is well


def test_a_narrow_or_short_pane_gets_the_key_lines(running: Path) -> None:
    edit(running / "status.json", storiesAtStart=0, maxCostUsd=5.0)
    for size in ((50, 30), (100, 12)):
        lines = rows(render(dashboard(snapshot_of(running), size), width=size[0], height=size[1]))
        assert lines[0] == "feat2 · running · iteration 2 / 5"
        assert lines[1].startswith("STORY-002 - Add the CLI flag")
        assert "1/3 done · ETA ~" in lines[2]
        assert lines[3:5] == ["$1.23 of $5.00 · $2.00/h", "⚙ Bash: pytest -q tests/red"]
        assert not any("╭" in line for line in lines)


@pytest.mark.parametrize(
    ("room", "events", "log", "shown"),
    [(10, 3, 20, (3, 7)), (10, 40, 40, (3, 7)), (10, 2, 3, (2, 3)), (10, 40, 2, (8, 2)), (0, 5, 5, (0, 0))],
)
def test_events_and_log_share_the_rows_left(room: int, events: int, log: int, shown: tuple[int, int]) -> None:
    assert share(room, events, log) == shown


def test_the_dashboard_shows_each_usage_window_with_its_cap_and_reset(
    running: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's accounts (status.json's pacing) and their windows in the book every loop of the user shares."""
    home = tmp_path / "ralph-home"
    home.mkdir()
    monkeypatch.setenv("RALPH_HOME", str(home))
    account = "claude/login:/home/me/.claude"
    edit(
        running / "status.json",
        pacing={"accounts": [{"agent": "claude", "account": account}], "caps": {"five_hour": 0.5}},
    )
    windows = {
        "five_hour": {"utilization": 0.55, "resetsAt": "2100-01-01T05:00:00Z", "readAt": "2026-11-21T02:30:00Z"},
        "seven_day": {"utilization": 0.2, "resetsAt": "2100-01-05T00:00:00Z", "readAt": "2026-11-21T02:30:00Z"},
        "old": {"utilization": 0.9, "resetsAt": "2026-01-01T00:00:00Z", "readAt": "2025-12-31T00:00:00Z"},
    }
    (home / "agent-limits.json").write_text(
        json.dumps({"schema_version": 1, "limits": {}, "windows": {account: windows}})
    )

    text = render(dashboard(snapshot_of(running)), colour=True, width=160, height=40)

    plain = render(dashboard(snapshot_of(running)), width=160, height=40)
    assert "Window     claude 5-hour: 55% used, past your 50% cap · resets 2100-01-01" in plain
    assert "Window     claude weekly: 20% used · resets 2100-01-05" in plain
    assert "claude old" not in plain  # reset already: its share is no longer known
    assert "\x1b[31mclaude 5-hour" in text  # past its cap: red
