"""A parallel run's fleet as `ralph status` and the monitor word it (words/fleet.py, monitor/fleet.py), from fleet
files written through their schema and loops' records copied from the monitor's fixture feature."""

from __future__ import annotations

import io
import os
import shlex
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ralphloop.cli.status_text import render as render_status
from ralphloop.cli.status_text import render_fleet
from ralphloop.monitor.snapshot import read_snapshot
from ralphloop.monitor.views import dashboard, end_lines, plain_lines
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.fleet import read_fleet, read_fleet_noted
from ralphloop.state.report import gather
from ralphloop.words.fleet import cut, fleet_lines, remove_command
from tests.fleet_feature import coordinator, fixture_fleet, held, write_fleet
from tests.monitor_feature import copy_feature

NOW = datetime(2026, 11, 21, 2, 37, 0, tzinfo=UTC)
LIVE = {  # the running loop's iteration as a live run writes it (its numbers as in test_status_header)
    "inIteration": True,
    "iterationsCounted": 1,
    "iterationStartedAt": "2026-11-21T02:33:48Z",
    "iterationTimeoutS": 1800,
    "lastOutputAt": "2026-11-21T02:36:20Z",
}
PLAN: dict[str, tuple[str, dict[str, Any] | None]] = {
    "S-1": ("merged", {"status": "complete", "costUsd": 0.25, "iteration": 2, "maxIterations": 2}),
    "S-2": ("running", LIVE),
    "S-3": (
        "failed",
        {"status": "halted", "costUsd": 0.0041, "iteration": 4, "iterationsCounted": 4, "maxIterations": 5},
    ),
    "S-4": ("queued", {"status": "complete", "costUsd": 0.5, "iteration": 2, "maxIterations": 2}),
    "S-5": ("waiting", None),
}


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    return copy_feature(tmp_path)


@pytest.fixture
def folders(feature: Path) -> Iterator[dict[str, Path]]:
    """The fleet's loops' feature folders, S-2's loop running (its lock held)."""
    found = fixture_fleet(feature, PLAN, queue=["S-4"], storiesMerged=1, parallel=3)
    with held(found["S-2"] / ".lock"):
        yield found


def paths_of(folder: Path) -> FeaturePaths:
    return FeaturePaths(str(folder.parent.parent), str(folder))


def status_lines(feature: Path, width: int | None = None) -> list[str]:
    fleet = read_fleet(paths_of(feature))
    assert fleet is not None
    return render_fleet(fleet, NOW, paths_of(feature), width).splitlines()


def render(renderable: Any, *, width: int = 100, height: int = 30, colour: bool = False) -> str:
    console = Console(width=width, height=height, record=True, force_terminal=colour, file=io.StringIO())
    console.print(renderable)
    return console.export_text(styles=colour)


def test_every_loop_is_one_row_whose_numbers_are_its_own_status(feature: Path, folders: dict[str, Path]) -> None:
    lines = status_lines(feature)
    resume = "ralph run --parallel 3 -f feat2"
    # the cost: 0.25 + 1.234567 + 0.0041 + 0.5, the loops' own
    assert lines[0] == "Fleet:      stopped (killed?) · 1 / 5 stories merged · $1.99 · up to 3 loops at once"
    assert lines[1] == f"Resume:     {resume}  (adopts the loops, worktrees and queue it left)"
    rows = {line.split()[0]: line for line in lines if line.startswith("  S-")}
    assert rows["S-1"] == "  S-1  merged    attempt 1 of 3 · iteration 2 / 2 · $0.25"
    assert rows["S-4"] == "  S-4  queued    attempt 1 of 3 · iteration 2 / 2 · $0.50 · next to merge"
    assert rows["S-5"] == "  S-5  waiting   attempt 1 of 3 · why S-5 is waiting"
    assert rows["S-3"].endswith("· iteration 4 / 5 · $0.0041 · why S-3 is failed")
    # the running loop: its agent's activity (cleaned of the agent's escapes), how long ago it last printed
    assert rows["S-2"] == (
        "  S-2  running   attempt 1 of 3 · iteration 2 / 5 · $1.23 · Bash: pytest -q tests/red · last output 40s ago"
    )
    # ...worded as that loop's own `ralph status` words them
    own = render_status(gather(paths_of(folders["S-2"])), NOW).splitlines()
    assert "Iteration:  2 / 5 · 03:12 of 30:00 · last output 40s ago" in own
    assert any(line.startswith("Spent:      $1.23") for line in own)
    assert lines[-1] == "Queue:      S-4 (merged in this order)"


def test_a_failed_loops_kept_worktree_comes_with_the_command_that_removes_it(
    feature: Path, folders: dict[str, Path]
) -> None:
    kept = folders["S-3"].parent.parent
    lines = status_lines(feature)
    at = next(index for index, line in enumerate(lines) if line.startswith("  S-3"))
    assert lines[at + 1] == f"       kept: {kept} (branch ralph/feat/S-3); remove both with:"
    assert lines[at + 2] == f"       git worktree remove --force {kept} && git branch -D ralph/feat/S-3"
    # once it is gone, neither line
    os.rename(kept, kept.with_name("elsewhere"))
    assert not any("git worktree remove" in line for line in status_lines(feature))


def test_rows_are_cut_to_the_width_and_commands_never(feature: Path, folders: dict[str, Path]) -> None:
    lines = status_lines(feature, width=50)
    command = next(line for line in lines if "git worktree remove" in line)
    assert len(command) > 50 and shlex.split(command)[-1] == "ralph/feat/S-3"  # whole, to paste
    resume = next(line for line in lines if line.startswith("Resume:"))
    assert len(resume) > 50
    others = [line for line in lines if line not in (command, resume)]
    assert all(len(line) <= 50 for line in others), others
    assert any(line.endswith("…") for line in others)
    assert cut("abcdef", 4) == "abc…" and cut("abcdef", None) == "abcdef" and cut("abc", 3) == "abc"


def test_the_coordinators_state(feature: Path, folders: dict[str, Path]) -> None:
    with held(coordinator(feature)):
        lines = status_lines(feature)
        assert lines[0].startswith(f"Fleet:      running (PID {os.getpid()}) · 1 / 5 stories merged")
        assert not any(line.startswith("Resume:") for line in lines)
    write_fleet(feature, status="halted", exitMessage="S-3 failed 3 times", storiesMerged=1, storiesTotal=5)
    assert status_lines(feature)[0].startswith("Fleet:      halted: S-3 failed 3 times · 1 / 5 stories merged")
    write_fleet(feature, status="complete", storiesMerged=5, storiesTotal=5, bringIn="git merge --ff-only x")
    assert status_lines(feature)[:3] == [
        "Fleet:      complete · 5 / 5 stories merged · up to 1 loop at once",  # no loop reported a cost
        "Bring in:   git merge --ff-only x",
        "Queue:      empty",
    ]


def test_the_remove_command_is_quoted_and_refused_for_control_characters() -> None:
    command = remove_command("/tmp/it's here", "ralph/feat/S-1")
    assert command is not None
    first, second = command.split(" && ")
    assert shlex.split(first) == ["git", "worktree", "remove", "--force", "/tmp/it's here"]
    assert shlex.split(second) == ["git", "branch", "-D", "ralph/feat/S-1"]
    assert remove_command("/tmp/a\nb", "x") is None and remove_command("/tmp/a\x1b[2Jb", "x") is None


def test_agent_written_words_reach_no_screen_as_controls(feature: Path) -> None:
    hostile = "S-9\x1b]0;PWNED\x07\x1b[2J\nsecond line"
    fixture_fleet(feature, {hostile: ("failed", {"activity": "x\x1b[31m"})}, queue=[hostile])
    paths = paths_of(feature)
    fleet = read_fleet(paths)
    assert fleet is not None
    lines = fleet_lines(fleet, NOW, "ralph run --parallel 1")
    snapshot = read_snapshot(paths, NOW)
    shown = "\n".join(lines) + render(dashboard(snapshot), colour=True) + render(dashboard(snapshot, (50, 20)))
    shown += "\n".join(line for _, line in plain_lines(snapshot))
    assert "\x1b]0;" not in shown and "\x07" not in shown and "\x1b[2J" not in shown
    assert not any(line.startswith("second line") for line in lines), lines  # one line each
    assert "  S-9 second line  failed    attempt 1 of 3 · iteration 2 / 5" in "\n".join(lines)


def test_the_dashboard_shows_every_loop_in_its_colour(feature: Path, folders: dict[str, Path]) -> None:
    snapshot = read_snapshot(paths_of(feature), NOW)
    assert snapshot.shows_fleet and snapshot.ended  # its coordinator holds its lock no more
    text = render(dashboard(snapshot, (80, 24)), width=80, height=24)
    lines = text.splitlines()
    assert lines[0] == "ralph monitor · feat2 · parallel run"
    assert lines[1].startswith("Fleet  stopped (killed?) · 1 / 5 stories merged · $1.99")
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    rows = {line.split()[1]: line for line in lines if line.startswith("│  S-")}
    assert list(rows) == ["S-1", "S-2", "S-3", "S-4", "S-5"]
    assert rows["S-2"].split()[2:8] == ["running", "1", "of", "3", "2", "/"]
    assert "$1.23" in rows["S-2"] and "Bash: pytest -q tests/red" in rows["S-2"]
    assert "queue: S-4 (merged in this order)" in text
    coloured = render(dashboard(snapshot, (100, 30)), colour=True)
    for state, code in (("merged", 32), ("running", 36), ("failed", 31), ("queued", 33), ("waiting", 33)):
        assert f"\x1b[{code}m{state}" in coloured, state


def test_a_narrow_pane_shows_one_line_per_loop(feature: Path, folders: dict[str, Path]) -> None:
    snapshot = read_snapshot(paths_of(feature), NOW)
    lines = render(dashboard(snapshot, (50, 24)), width=50).splitlines()
    assert lines == [
        "feat2 · stopped · 1/5 merged",
        "S-1 merged",
        "S-2 running",
        "S-3 failed",
        "S-4 queued",
        "S-5 waiting",
        "queue: S-4 (merged in this order)",
    ]


def test_more_loops_than_rows_are_counted(feature: Path) -> None:
    fixture_fleet(feature, {f"S-{n}": ("waiting", None) for n in range(1, 31)})
    lines = render(dashboard(read_snapshot(paths_of(feature), NOW), (80, 24)), width=80, height=24).splitlines()
    assert len(lines) == 24 and lines[-1].startswith("╰")
    assert any("… 13 more" in line for line in lines), lines  # 24 rows: title, fleet, box, header, 17 loops, queue


def test_a_pipe_gets_a_line_per_loop_without_clocks(feature: Path, folders: dict[str, Path]) -> None:
    snapshot = read_snapshot(paths_of(feature), NOW)
    found = plain_lines(snapshot)
    assert [key for key, _ in found] == ["fleet", "loop S-1", "loop S-2", "loop S-3", "loop S-4", "loop S-5", "queue"]
    running = "S-2  running   attempt 1 of 3 · iteration 2 / 5 · $1.23 · Bash: pytest -q tests/red"
    assert dict(found)["loop S-2"] == running  # no "last output 40s ago": it would print a line every second
    end = end_lines(snapshot)
    assert end[0] == "The parallel run has ended: stopped"
    assert end[1:] == fleet_lines(snapshot.fleet or {}, NOW, snapshot.resume)


def test_a_single_loop_running_beside_an_ended_fleet_is_the_view(feature: Path, folders: dict[str, Path]) -> None:
    with held(feature / ".lock"):
        snapshot = read_snapshot(paths_of(feature), NOW)
        assert not snapshot.shows_fleet and not snapshot.ended
        assert [key for key, _ in plain_lines(snapshot)] == ["run"]
    with held(coordinator(feature)), held(feature / ".lock"):
        assert read_snapshot(paths_of(feature), NOW).shows_fleet


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "garbage", "lock-fifo"])
def test_a_fleet_file_that_cannot_be_read_is_a_note(feature: Path, kind: str) -> None:
    fleet = feature / "fleet.json"
    if kind == "fifo":
        os.mkfifo(fleet)
    elif kind == "dev-zero":
        fleet.symlink_to("/dev/zero")
    elif kind == "garbage":
        fleet.write_bytes(b"\x00\xff{not json")
    else:
        write_fleet(feature)
        os.mkfifo(coordinator(feature))
    found, note = read_fleet_noted(paths_of(feature))
    assert found is None and note is not None and "\n" not in note
    assert ("fleet.lock" if kind == "lock-fifo" else "fleet.json") in note
    assert note.startswith("the parallel run's fleet is not shown: ")
    snapshot = read_snapshot(paths_of(feature), NOW)
    assert snapshot.report is not None and not snapshot.shows_fleet
    assert ("note", f"note: {note}") in plain_lines(snapshot)
    assert "the parallel run's fleet is not shown: " in render(dashboard(snapshot, (100, 30)))
    assert read_fleet_noted(paths_of(feature.parent / "nothing-here")) == (None, None)
