"""`ralph run --start-at HH:MM|reset` (issue 34, state/start_at.py): the instant decided once and kept in the feature's
`.start_at.json`, so that a ralph killed while it waits waits for the same instant when started again."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.state.start_at import StartAt, check_start

NOW = datetime(2027, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's zone is UTC for the test (a time of day is the machine's)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def starting(tmp_path: Path, spec: str, reset: datetime | None = None, told: list[str] | None = None) -> StartAt:
    return StartAt(spec, str(tmp_path / ".start_at.json"), lambda now: reset, (told if told is not None else []).append)


@pytest.mark.parametrize("spec", ["25:00", "2am", "12:60", "", "soon", "reset now"])
def test_a_bad_instant_is_one_line_naming_the_flag(spec: str) -> None:
    with pytest.raises(RalphError, match=r"^--start-at .*expected reset or a time of day HH:MM"):
        check_start(spec)


def test_a_time_of_day_is_its_next_occurrence_and_is_kept(tmp_path: Path, utc: None) -> None:
    at = starting(tmp_path, "02:00").due(NOW)
    assert at == datetime(2027, 1, 2, 2, 0, tzinfo=UTC)  # 02:00 has passed today: tomorrow's
    (tmp_path / "other").mkdir()
    assert starting(tmp_path / "other", "13:30").due(NOW) == datetime(2027, 1, 1, 13, 30, tzinfo=UTC)
    kept = json.loads((tmp_path / ".start_at.json").read_text())
    assert kept["spec"] == "02:00" and kept["schema_version"]


def test_started_again_it_waits_for_the_same_instant_and_after_it_starts_at_once(tmp_path: Path, utc: None) -> None:
    first = starting(tmp_path, "02:00").due(NOW)
    assert starting(tmp_path, "02:00").due(NOW + timedelta(hours=6)) == first  # killed, started again
    assert first is not None
    assert starting(tmp_path, "02:00").due(first + timedelta(hours=1)) is None  # waited for: go
    assert starting(tmp_path, "02:00").due(first + timedelta(hours=13)) == first + timedelta(days=1)  # a new night
    assert starting(tmp_path, "03:00").due(NOW) == datetime(2027, 1, 2, 3, 0, tzinfo=UTC)  # another flag: anew


def test_reset_waits_for_the_accounts_reset_or_says_why_it_starts_now(tmp_path: Path) -> None:
    reset = NOW + timedelta(hours=3)
    assert starting(tmp_path, "reset", reset).due(NOW) == reset
    told: list[str] = []
    (tmp_path / "none").mkdir()
    assert starting(tmp_path / "none", "reset", None, told).due(NOW) is None
    assert told == ["--start-at reset: no reset of the agent account's usage windows is known yet; starting now"]


def test_a_damaged_or_hostile_kept_file_is_decided_anew(tmp_path: Path) -> None:
    path = tmp_path / ".start_at.json"
    path.write_text('{"spec": "reset", "at": "not a time"}')
    assert starting(tmp_path, "reset", NOW + timedelta(hours=1)).due(NOW) == NOW + timedelta(hours=1)
    path.unlink()
    path.symlink_to("/dev/zero")
    assert starting(tmp_path, "reset", NOW + timedelta(hours=2)).due(NOW) == NOW + timedelta(hours=2)
    assert not path.is_symlink() and json.loads(path.read_text())["spec"] == "reset"  # the link replaced, not followed


def test_one_flag_in_any_spelling_and_a_kept_instant_no_flag_could_have_decided_is_decided_anew(
    tmp_path: Path, utc: None
) -> None:
    assert check_start(" 2:00 ") == "02:00" and check_start("RESET") == "reset"
    first = starting(tmp_path, "2:00").due(NOW)
    assert starting(tmp_path, "02:00").due(NOW + timedelta(hours=1)) == first  # the same flag
    path = tmp_path / ".start_at.json"
    path.write_text(json.dumps({"spec": "02:00", "at": "2099-01-01T02:00:00+00:00"}))  # an agent's, or damage
    assert starting(tmp_path, "02:00").due(NOW) == datetime(2027, 1, 2, 2, 0, tzinfo=UTC)


def test_a_run_that_ends_clears_its_instant_and_an_interrupted_one_keeps_it(tmp_path: Path, utc: None) -> None:
    from ralphloop.core.events import LoopEnded, Tally
    from ralphloop.core.exitcodes import ExitReason

    def ended(reason: ExitReason) -> LoopEnded:
        return LoopEnded("r", reason, "", Tally(), 0.0, 0, 0, NOW)

    start = starting(tmp_path, "02:00")
    start.due(NOW)
    path = tmp_path / ".start_at.json"
    start(ended(ExitReason.INTERRUPTED))
    assert path.exists()  # Ctrl+C: started again, it waits for the same instant
    start(ended(ExitReason.USAGE_WINDOW))
    assert not path.exists()  # spent: the same flag the next evening means that evening
    start(ended(ExitReason.COMPLETE))  # nothing left to clear: no error


def test_a_time_of_day_follows_the_zones_rules_across_a_daylight_saving_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        before_change = datetime(2027, 3, 27, 21, 0, tzinfo=UTC)  # 22:00 CET, the night clocks go forward
        at = StartAt("09:00", "/nonexistent/x", lambda now: None, lambda text: None)
        assert _next(at, before_change).astimezone().strftime("%H:%M %Z") == "09:00 CEST"
    finally:
        monkeypatch.undo()
        time.tzset()


def _next(start: StartAt, now: datetime) -> datetime:
    from ralphloop.state.start_at import _next_time_of_day

    return _next_time_of_day(start.spec, now)
