"""The user's caps on usage windows (guards/windows.py): how `--max-window` and `usage_limit.windows` are read, how
bad ones are refused, and which window of an account holds it, until when."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ralphloop.core.limits import UsageWindow, WindowReading
from ralphloop.guards.windows import WindowCaps, capped, parse_caps
from ralphloop.words.windows import percent

NOW = datetime(2027, 1, 1, tzinfo=UTC)


def test_caps_are_read_from_flags_a_string_and_config_in_every_spelling() -> None:
    assert parse_caps(["five_hour=80%", "seven_day=0.5"]).shares == (("five_hour", 0.8), ("seven_day", 0.5))
    assert parse_caps("all=90%, five_hour=1").shares == (("all", 0.9), ("five_hour", 1.0))
    assert parse_caps({"five_hour": 0.8, "Seven_Day": "50%", "300_minutes": 1}).shares == (
        ("five_hour", 0.8),
        ("seven_day", 0.5),
        ("300_minutes", 1.0),
    )
    assert parse_caps(["five_hour=80%", "five_hour=60%"]).of("five_hour") == 0.6  # the later one wins


def test_a_window_without_its_own_cap_takes_alls_and_none_without_either() -> None:
    caps = parse_caps(["all=90%", "seven_day=50%"])
    assert (caps.of("seven_day"), caps.of("five_hour"), caps.of("300_minutes")) == (0.5, 0.9, 0.9)
    assert caps.of("seven_day_opus") is None  # one model's window: capped only by name
    assert parse_caps(["all=90%", "seven_day_opus=50%"]).of("seven_day_opus") == 0.5
    assert parse_caps(["five_hour=80%"]).of("seven_day") is None
    assert not WindowCaps() and caps


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["five_hours=80%"], "unknown window 'five_hours'; did you mean 'five_hour'? known: all, five_hour"),
        (["five_hour"], "'five_hour' is not WINDOW=SHARE"),
        (["five_hour=80"], "the cap of five_hour: 80 is above 1: write 80% for a percentage"),
        (["five_hour=0"], "expected a share above 0 and at most 1"),
        (["five_hour=120%"], "expected a share above 0 and at most 1"),
        (["five_hour=lots"], "'lots' is not a share such as 0.8 or 80%"),
        ({"five_hour": True}, "expected a share above 0"),
        (42, "expected caps such as five_hour=80%"),
        ([f"{n}_minutes=1" for n in range(1, 40)], "at most 32 windows"),
    ],
)
def test_a_bad_cap_is_refused_in_one_line_that_says_what_was_expected(given: object, said: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_caps(given)
    message = str(caught.value)
    assert said in message and "\n" not in message


def reading(name: str, share: float, resets_in_h: float | None, read_ago_s: float = 0) -> WindowReading:
    resets = NOW + timedelta(hours=resets_in_h) if resets_in_h is not None else None
    return WindowReading(UsageWindow(name, share, resets), NOW - timedelta(seconds=read_ago_s))


def test_an_account_is_held_by_the_capped_window_that_resets_last() -> None:
    caps = parse_caps(["five_hour=50%", "seven_day=50%"])
    readings = {"five_hour": reading("five_hour", 0.6, 2), "seven_day": reading("seven_day", 0.7, 100)}
    held = capped("claude", "claude/k", readings, caps, NOW, 1800)
    assert held is not None and held.reading.window.name == "seven_day" and held.until == NOW + timedelta(hours=100)
    limit = held.limit()
    assert (limit.vendor, limit.kind, limit.source, limit.resets_at) == ("claude", "seven_day", "window", held.until)
    assert "claude's weekly window is 70% used, at or past your cap of 50%" in limit.message
    assert "not the vendor's limit" in limit.message and "--max-window seven_day=50%" in limit.message


def test_headroom_a_window_without_a_cap_and_a_past_reset_hold_nothing() -> None:
    caps = parse_caps(["five_hour=50%"])
    assert capped("c", "c/k", {"five_hour": reading("five_hour", 0.49, 2)}, caps, NOW, 1800) is None
    assert capped("c", "c/k", {"seven_day": reading("seven_day", 1.0, 2)}, caps, NOW, 1800) is None
    assert capped("c", "c/k", {"five_hour": reading("five_hour", 0.9, -1)}, caps, NOW, 1800) is None
    at_cap = capped("c", "c/k", {"five_hour": reading("five_hour", 0.5, 2)}, caps, NOW, 1800)
    assert at_cap is not None  # reaching the cap is enough


def test_a_capped_window_with_no_reset_holds_for_the_fallback_wait_after_it_was_read() -> None:
    caps = parse_caps(["all=80%"])
    held = capped("c", "c/k", {"daily": reading("daily", 0.9, None, read_ago_s=600)}, caps, NOW, 1800)
    assert held is not None and held.until == NOW + timedelta(seconds=1200)
    assert capped("c", "c/k", {"daily": reading("daily", 0.9, None, read_ago_s=1800)}, caps, NOW, 1800) is None


def test_shares_are_worded_as_percentages() -> None:
    assert [percent(x) for x in (0.8, 0.505, 1.0, 0.0)] == ["80%", "50.5%", "100%", "0%"]
