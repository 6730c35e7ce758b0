"""parse_duration and format_duration: the durations users type and the ones ralph prints."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.words.durations import MAX_SECONDS, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15", 15 * 60),
        ("90s", 90),
        ("15m", 15 * 60),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1h30m15s", 5415),
        ("2.5", 150),
        ("1.5h", 5400),
        (" 15M ", 15 * 60),
        ("45m1h", 6300),
    ],
)
def test_parse_duration_accepts(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_bare_number_uses_the_bare_unit() -> None:
    assert parse_duration("90", bare_unit="s") == 90
    assert parse_duration("2", bare_unit="h") == 7200


@pytest.mark.parametrize(
    "text",
    ["", "   ", "0", "0m", "0s", "-5", "-5m", "15x", "m", "h1", "1h 30m", "1hh", "nan", "inf", "-inf", "1e400"],
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.5, "0.5s"), (1, "1s"), (59, "59s"), (60, "1m"), (90, "1m30s"), (3600, "1h"), (3661, "1h1m1s"), (7200, "2h")],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(min_value=1, max_value=10**7))
def test_format_then_parse_round_trips_whole_seconds(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.integers(0, 500), st.integers(0, 500), st.integers(0, 500))
def test_parse_sums_hours_minutes_and_seconds(hours: int, minutes: int, secs: int) -> None:
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    total = hours * 3600 + minutes * 60 + secs
    if total == 0:
        with pytest.raises(ValueError):
            parse_duration(text)
    else:
        assert parse_duration(text) == total


@given(st.integers(min_value=1, max_value=366 * 24 * 60))
def test_bare_number_is_minutes(minutes: int) -> None:
    assert parse_duration(str(minutes)) == minutes * 60


@pytest.mark.parametrize("text", ["527041", "99999999999h", "1e26", "8785h", "1" + "0" * 30 + "s"])
def test_more_than_a_year_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="more than a year"):
        parse_duration(text)


@given(st.text(max_size=12))
def test_parse_duration_returns_a_positive_finite_number_or_raises(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except ValueError:
        return
    assert 0 < seconds <= MAX_SECONDS
