"""status.json's "now" is always true: the agent's activity and last output are written at most once a second, and a
change inside that window is written when it ends (never dropped). The clock is injected; the timer is a
stand-in for threading.Timer that fires when the test says, and one test uses the real one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ralphloop.core.clock import FakeClock
from ralphloop.core.events import AgentActivity, AgentOutput, Waiting
from ralphloop.guards.budget import Budget
from ralphloop.records.status import StatusFile
from tests.events import WHEN, iteration_finished, iteration_started, loop_ended, run_started
from tests.integration.helpers import wait_until


class Timers:
    """threading.Timer's part, by hand: what was scheduled, run when the test has moved the clock."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Callable[[], None], list[bool]]] = []

    def __call__(self, delay: float, action: Callable[[], None]) -> Any:
        cancelled = [False]
        self.armed.append((delay, action, cancelled))

        class Handle:
            def cancel(self) -> None:
                cancelled[0] = True

        return Handle()

    def fire(self) -> None:
        armed, self.armed = self.armed, []
        for _, action, cancelled in armed:
            if not cancelled[0]:
                action()


def read(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def started(tmp_path: Path, clock: FakeClock, timers: Timers) -> tuple[StatusFile, Path]:
    path = tmp_path / "status.json"
    sink = StatusFile(
        str(path), clock.now, clock.monotonic, budget=Budget(max_cost_usd=5.0, max_runtime_s=7200.0), timer=timers
    )
    sink(run_started(started_at=clock.now(), timeout_s=1800))
    sink(iteration_started(started_at=clock.now()))
    return sink, path


def test_a_long_tool_after_a_quick_one_is_written_when_the_window_ends(tmp_path: Path) -> None:
    clock, timers = FakeClock(), Timers()
    sink, path = started(tmp_path, clock, timers)
    clock.advance(10)
    sink(AgentActivity("Write: a.py"))
    assert read(path)["activity"] == "Write: a.py"  # the first change of a window: at once
    clock.advance(0.4)
    sink(AgentOutput("stdout", b"{}\n"))
    clock.advance(0.1)
    sink(AgentActivity("Bash: pytest"))  # the two-minute test run, 0.5 s after the Write
    assert read(path)["activity"] == "Write: a.py"  # inside the window: not yet
    assert read(path)["lastOutputAt"] is None
    assert [round(delay, 3) for delay, _, _ in timers.armed] == [0.6]  # one timer, for the window's end

    clock.advance(0.5)
    timers.fire()
    written = read(path)
    assert written["activity"] == "Bash: pytest"
    assert written["lastOutputAt"] == "2026-01-01T00:00:10Z"
    assert written["lastUpdated"] == "2026-01-01T00:00:11Z"


def test_a_whole_write_carries_the_pending_change_and_the_last_write_stops_the_timer(tmp_path: Path) -> None:
    clock, timers = FakeClock(), Timers()
    sink, path = started(tmp_path, clock, timers)
    sink(AgentActivity("Write: a.py"))
    sink(AgentActivity("Bash: pytest"))
    sink(Waiting("rate limit", "100 calls this hour", WHEN, 60.0, first=True))  # written at once, with the Bash
    assert read(path)["activity"] == "Bash: pytest"
    sink(AgentActivity("Read: b.py"))
    sink(loop_ended())
    timers.fire()  # cancelled by the end: nothing written after the final state
    assert (read(path)["status"], read(path)["activity"]) == ("complete", None)


def test_output_alone_waits_for_the_window_and_the_iterations_write_carries_it(tmp_path: Path) -> None:
    clock, timers = FakeClock(), Timers()
    sink, path = started(tmp_path, clock, timers)
    clock.advance(5)
    sink(AgentOutput("stdout", b"thinking\n"))  # every chunk moves it: never a write of its own at once
    assert read(path)["lastOutputAt"] is None
    assert [delay for delay, _, _ in timers.armed] == [1.0]
    sink(iteration_finished())  # the agent ended within the second: its write carries the output's time
    assert read(path)["lastOutputAt"] == "2026-01-01T00:00:05Z"
    assert all(cancelled[0] for _, _, cancelled in timers.armed)  # no write left for the timer


def test_the_header_numbers_are_written(tmp_path: Path) -> None:
    clock, timers = FakeClock(), Timers()
    _, path = started(tmp_path, clock, timers)
    written = read(path)
    assert written["storiesAtStart"] == 1
    assert written["iterationStartedAt"] == "2026-01-01T00:00:00Z"
    assert written["iterationTimeoutS"] == 1800
    assert (written["maxCostUsd"], written["maxTokens"], written["maxRuntimeS"]) == (5.0, None, 7200.0)
    assert written["lastOutputAt"] is None


def test_with_the_real_timer_the_last_change_shows(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    clock = FakeClock()  # the wall clock of the records; the window is timed on the real monotonic clock
    sink = StatusFile(str(path), clock.now, time.monotonic, every=0.2)
    sink(run_started(started_at=clock.now()))
    sink(AgentActivity("Write: a.py"))
    sink(AgentActivity("Bash: pytest"))
    assert wait_until(lambda: read(path)["activity"] == "Bash: pytest", limit=10)
    assert wait_until(lambda: not [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)])
