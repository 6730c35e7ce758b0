"""`ralph status` words the header's numbers as the monitor does (words/pace.py), in local time, from a fixture
feature."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.cli.status_text import render
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.report import gather
from tests.monitor_feature import copy_feature, edit, held

NOW = datetime(2026, 11, 21, 2, 37, 0, tzinfo=UTC)


def local(moment: str, form: str = "%H:%M:%S") -> str:
    return f"{datetime.fromisoformat(moment).astimezone():{form}}"


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    """The fixture feature mid-run: its header's numbers in status.json, no log."""
    return copy_feature(
        tmp_path,
        logFile="",
        storiesAtStart=0,
        inIteration=True,
        iterationsCounted=1,
        iterationStartedAt="2026-11-21T02:33:48Z",
        iterationTimeoutS=1800,
        lastOutputAt="2026-11-21T02:36:20Z",
        maxCostUsd=5.0,
        maxTokens=1_000_000,
        tokens={"inputTokens": 100_000, "outputTokens": 23_456, "callsWithoutCost": 0},
    )


@pytest.fixture
def running(feature: Path) -> Iterator[Path]:
    with held(feature):
        yield feature


def shown(folder: Path) -> list[str]:
    return render(gather(FeaturePaths(str(folder.parent.parent), str(folder))), NOW).splitlines()


def test_a_live_run_says_how_far_how_much_and_when(running: Path) -> None:
    lines = shown(running)
    assert "Status:     running" in lines
    assert "Iteration:  2 / 5 · 03:12 of 30:00 · last output 40s ago" in lines
    eta = local("2026-11-21T03:51:00+00:00", "%H:%M")  # 37 minutes for one story, two left
    assert f"Stories:    1 / 3 pass  [###-------]  ETA ~{eta} (≈ 1h14m)" in lines
    assert f"Elapsed:    37m since {local('2026-11-21T02:00:00+00:00', '%H:%M')}" in lines
    spent = "$1.23 of $5.00 · $2.00/h, 100,000 in / 23,456 out tokens · 123,456 of 1,000,000 budget (this run)"
    assert f"Spent:      {spent} (claude-sonnet-4-5-20250929)" in lines
    assert "Calls:      45/100 in the last hour" in lines  # 55 free: when the next frees does not matter
    assert not any(line.startswith("Updated:") for line in lines)  # a live run's file is always fresh


def test_every_slot_used_says_when_one_frees_in_local_time(running: Path) -> None:
    edit(running / "status.json", apiCallsUsed=100)
    frees = local("2026-11-21T03:00:00+00:00")
    assert f"Calls:      100/100 in the last hour, all used: a slot frees at {frees}" in shown(running)


def test_waiting_for_an_answer_is_waiting(running: Path) -> None:
    asked = {
        "kind": "answer",
        "message": "usage limit reached: waiting for your answer",
        "until": "2026-11-21T02:37:22Z",
    }
    edit(running / "status.json", waiting=asked)  # as the loop words it (asking.py)
    lines = shown(running)
    assert "Status:     waiting" in lines
    until = local("2026-11-21T02:37:22+00:00")
    assert f"Waiting:    usage limit reached: waiting for your answer until {until}" in lines
    edit(running / "status.json", waiting={**asked, "message": "wait or exit?"})
    assert f"Waiting:    wait or exit?: your answer until {until}" in shown(running)


def test_an_ended_run_says_when_it_last_wrote_in_local_time(feature: Path) -> None:
    edit(feature / "status.json", status="complete", exitReason="complete", lastUpdated="2026-11-21T02:30:00Z")
    lines = shown(feature)
    assert f"Updated:    {local('2026-11-21T02:30:00+00:00')} (7m ago)" in lines
    assert not any(line.startswith(("Elapsed:", "Iteration:  2 / 5 ·")) for line in lines)
    assert not any("ETA" in line for line in lines)
