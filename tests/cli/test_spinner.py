"""The live line's text (seed 004's "Real-Time Timer" and "Retry Countdown"): pure functions of the frame,
the seconds, what to show and the terminal's width."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ralphloop.cli.spinner import FRAMES, clock, columns, fit, running_frame, waiting_frame


def test_the_frames_are_the_seeds_ten_braille_characters() -> None:
    assert FRAMES == "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    assert [running_frame(index, 0, None, 80)[0] for index in range(12)] == [*FRAMES, "⠋", "⠙"]


def test_clock_is_minutes_and_seconds_then_hours_past_an_hour() -> None:
    assert clock(0) == "00:00"
    assert clock(135.9) == "02:15"  # whole seconds, rounded down
    assert clock(3599) == "59:59"
    assert clock(3600) == "01:00:00"
    assert clock(36000 + 61) == "10:01:01"
    assert clock(-3) == "00:00"


def test_running_frame_shows_the_elapsed_time_and_the_agents_activity() -> None:
    assert running_frame(0, 135, None, 80) == "⠋ Running… 02:15"
    assert running_frame(2, 135, "", 80) == "⠹ Running… 02:15"
    assert running_frame(2, 135, "Bash: pytest -q", 80) == "⠹ Running… 02:15 · ⚙ Bash: pytest -q"
    assert running_frame(1, 3725, None, 80) == "⠙ Running… 01:02:05"


def test_running_frame_is_cut_to_the_width_so_the_line_never_wraps() -> None:
    text = running_frame(0, 5, "Bash: " + "x" * 200, 40)
    assert len(text) == 39  # one column left free: writing the last one makes some terminals wrap
    assert text.startswith("⠋ Running… 00:05 · ⚙ Bash: x")
    assert text.endswith("…")


def test_waiting_frame_counts_down_with_the_message_and_the_end() -> None:
    assert waiting_frame(0, 300, "rate limit reached", "14:05:00", 100) == (
        "⠋ Waiting… 05:00 remaining · rate limit reached (until 14:05:00)"
    )
    assert waiting_frame(3, 299.2, "x", "14:05:00", 100).startswith("⠸ Waiting… 05:00 remaining")  # rounded up
    assert waiting_frame(0, 7200, "usage limit", "09:00:00", 100).startswith("⠋ Waiting… 02:00:00 remaining")
    assert waiting_frame(0, 10, "m" * 300, "14:05:00", 50).endswith("…")


def test_wide_characters_count_as_two_columns() -> None:
    assert columns("a") == 1 and columns("⠋") == 1 and columns("⚙") == 1
    assert columns("漢") == 2
    assert columns("\u0301") == 0  # a combining accent
    text = fit("漢" * 30, 21)
    assert text == "漢" * 9 + "…"  # 18 + 1 columns, within 20


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"))), st.integers(min_value=1, max_value=300))
def test_fit_never_goes_past_the_width_and_keeps_what_fits(text: str, width: int) -> None:
    shown = fit(text, width)
    room = max(1, width - 1)
    assert sum(columns(char) for char in shown) <= room
    if sum(columns(char) for char in text) <= room:
        assert shown == text
    else:
        assert shown.endswith("…")
        assert text.startswith(shown[:-1])
