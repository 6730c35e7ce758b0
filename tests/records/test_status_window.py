"""status.json's call counters come from the account's rate-limit ledger (a rolling hour), with an injected clock."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from ralphloop.core.clock import FakeClock
from ralphloop.guards.ratelimit import take
from ralphloop.records.status import LiveStatus


def live_status(tmp_path: Path, clock: FakeClock, max_iterations: int | None = 20) -> LiveStatus:
    return LiveStatus(
        path=str(tmp_path / "status.json"),
        feature="feat",
        feature_dir=str(tmp_path),
        agent="command",
        max_iterations=max_iterations,
        api_calls_limit=100,
        started_at=clock.now(),
    )


def test_api_calls_count_a_rolling_hour_and_say_when_a_slot_frees(tmp_path: Path) -> None:
    clock = FakeClock()
    status = live_status(tmp_path, clock)
    starts = [clock.now(), clock.now() + timedelta(minutes=30)]  # 00:00 and 00:30
    clock.advance(61 * 60)  # 01:01: the first start has left the window
    _, slot = take(starts, clock.now(), 100)
    status.record_slot(slot)
    status.write(clock.now())
    written = json.loads((tmp_path / "status.json").read_text())
    assert written["apiCallsUsed"] == 2
    assert written["apiCallsLimit"] == 100
    assert written["rateLimitResetsAt"] == "2026-01-01T01:30:00Z"
    assert written["startedAt"] == "2026-01-01T00:00:00Z"
    assert written["lastUpdated"] == "2026-01-01T01:01:00Z"
    assert written["schema_version"] == 1


def test_no_calls_means_no_reset_time(tmp_path: Path) -> None:
    clock = FakeClock()
    status = live_status(tmp_path, clock, max_iterations=None)
    body = status.to_json(clock.now())
    assert body["apiCallsUsed"] == 0
    assert body["rateLimitResetsAt"] is None
    assert body["maxIterations"] is None
    assert body["circuitState"] == "CLOSED"
