"""status.json's call counters over a rolling hour, driven by an injected clock (no sleeping)."""

from __future__ import annotations

import json
from pathlib import Path

from ralphloop.protocols import FakeClock
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
    status.record_call(clock.now())  # 00:00
    clock.advance(30 * 60)
    status.record_call(clock.now())  # 00:30
    clock.advance(31 * 60)  # 01:01: the first call has left the window
    status.record_call(clock.now())
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
