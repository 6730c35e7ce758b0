"""The spinner while the agent works, and countdowns while the loop waits: one line redrawn in place,
on terminals only. The renderer writes into a StringIO with an injected clock; the spinner's thread is
replaced by calls to tick() (spin_interval=None), except in the one test of the thread itself."""

from __future__ import annotations

import io
import re
import threading
from datetime import UTC, datetime, timedelta

from ralphloop.cli.render import TerminalRenderer
from ralphloop.core.events import AgentActivity, AgentOutput, Notice, Waiting
from tests.cli.test_render_activity import finished
from tests.events import iteration_started
from tests.integration.helpers import wait_until

CLEAR = "\r\x1b[2K"
HIDE, SHOW = "\x1b[?25l", "\x1b[?25h"
STARTED = iteration_started()


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def terminal(**options: object) -> tuple[TerminalRenderer, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    settings: dict[str, object] = {"out": out, "live": True, "clock": clock, "spin_interval": None, **options}
    return TerminalRenderer(**settings), out, clock  # type: ignore[arg-type]


def visible(text: str) -> list[str]:
    """The lines a terminal shows: CLEAR empties the current line; cursor and colour codes take no room.
    The Iteration Metrics block after each result line is left out (tests/records/test_metrics.py has it)."""
    text = re.sub(r"\x1b\[\?25[lh]|\x1b\[[0-9;]*m", "", text)
    text = re.sub(r"--- Iteration Metrics ---\n(?:[^\n]*\n)*?Success: [✓✗]\n", "", text)
    lines = [""]
    for part in re.split(r"(\r\x1b\[2K|\n)", text):
        if part == "\n":
            lines.append("")
        elif part == CLEAR:
            lines[-1] = ""
        else:
            lines[-1] += part
    return lines


def waiting(seconds_left: float, *, first: bool = False, done: bool = False) -> Waiting:
    until = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    return Waiting("rate limit", "rate limit reached: 5/5", until, seconds_left, first=first, done=done)


def local_time(when: datetime) -> str:
    return f"{when.astimezone():%H:%M:%S}"


def test_the_spinner_turns_with_the_elapsed_time_and_the_agents_tool() -> None:
    renderer, out, clock = terminal()
    renderer(STARTED)
    assert visible(out.getvalue()) == ["── Iteration 1 / 20 · S-1: Story 1", "⠋ Running… 00:00"]
    assert out.getvalue().count(HIDE) == 1  # hidden while the spinner turns

    clock.now += 135
    assert renderer.tick()
    assert visible(out.getvalue())[-1] == "⠙ Running… 02:15"
    renderer(AgentActivity("Bash: pytest -q"))  # drawn at once, on the same frame
    assert visible(out.getvalue())[-1] == "⠙ Running… 02:15 · ⚙ Bash: pytest -q"
    clock.now += 3600
    assert renderer.tick()
    assert visible(out.getvalue())[-1] == "⠹ Running… 01:02:15 · ⚙ Bash: pytest -q"

    renderer(finished())
    text = out.getvalue()
    assert visible(text) == ["── Iteration 1 / 20 · S-1: Story 1", "  · S-1 still open · 0/1 · 1s", ""]
    assert text.rindex(SHOW) > text.rindex(HIDE)  # the cursor is back once the spinner stops
    assert not renderer.tick()  # the thread ends
    assert text == out.getvalue()  # and draws nothing more


def test_lines_printed_while_the_spinner_turns_go_above_it() -> None:
    renderer, out, _ = terminal()
    renderer(STARTED)
    renderer(Notice("warning", "the session to resume is gone"))
    assert visible(out.getvalue()) == [
        "── Iteration 1 / 20 · S-1: Story 1",
        "⚠ the session to resume is gone",
        "⠋ Running… 00:00",
    ]


def test_the_spinner_waits_while_a_countdown_has_the_line() -> None:
    renderer, out, clock = terminal()
    renderer(STARTED)
    renderer(waiting(300, first=True))
    countdown = f"⠋ Waiting… 05:00 remaining · rate limit reached: 5/5 (until {local_time(waiting(0).until)})"
    assert visible(out.getvalue())[-1] == countdown
    before = out.getvalue()
    assert renderer.tick()  # the spinner's thread goes on, but draws nothing over the countdown
    assert out.getvalue() == before
    renderer(waiting(299.2))
    assert visible(out.getvalue())[-1].startswith("⠙ Waiting… 05:00 remaining")
    clock.now += 301
    renderer(waiting(0, done=True))
    assert visible(out.getvalue())[-1].endswith(" Running… 05:01")


def test_a_countdown_between_iterations_is_redrawn_in_place_and_cleared() -> None:
    renderer, out, _ = terminal()
    for left in (125, 124, 123):
        renderer(waiting(left, first=left == 125))
    assert len(visible(out.getvalue())) == 1
    assert visible(out.getvalue())[0].startswith("⠹ Waiting… 02:03 remaining · rate limit reached: 5/5 (until ")
    renderer(waiting(0, done=True))
    assert visible(out.getvalue()) == [""]
    assert HIDE not in out.getvalue()


def test_on_a_pipe_there_is_no_spinner_and_one_line_per_wait() -> None:
    renderer, out, clock = terminal(live=False)
    renderer(STARTED)
    clock.now += 5
    assert not renderer.tick()
    renderer(AgentActivity("Bash: make"))
    for left in (61, 60):
        renderer(waiting(left, first=left == 61))
    renderer(waiting(0, done=True))
    renderer(finished())
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text
    assert not any(char in text for char in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    assert text.splitlines()[:4] == [
        "── Iteration 1 / 20 · S-1: Story 1",
        f"⏳ rate limit reached: 5/5 · waiting 00:01:01 (until {local_time(waiting(0).until)})",
        "  · S-1 still open · 0/1 · 1s",
    ]


def test_with_verbose_output_the_agents_own_lines_are_shown_instead_of_the_spinner() -> None:
    renderer, out, _ = terminal(verbose=True)
    renderer(STARTED)
    renderer(AgentOutput("stdout", b"working\n"))
    assert not renderer.tick()
    renderer(finished())
    assert "Running" not in out.getvalue() and HIDE not in out.getvalue()
    assert "working\n" in out.getvalue()


def test_colour_paints_the_spinner_and_no_colour_leaves_only_the_redraw_and_cursor_codes() -> None:
    coloured, out, _ = terminal(colour=True)
    coloured(STARTED)
    assert "\x1b[36m⠋\x1b[0m Running… 00:00" in out.getvalue()

    plain, out, _ = terminal(colour=False)  # NO_COLOR on a terminal: the spinner turns, uncoloured
    plain(STARTED)
    plain(finished())
    text = out.getvalue()
    assert "⠋ Running… 00:00" in text
    assert re.findall(r"\x1b\[[0-9;?]*[a-zA-Z]", text) == [HIDE, "\x1b[2K", "\x1b[2K", SHOW]


def test_the_line_is_cut_to_the_terminals_width() -> None:
    renderer, out, _ = terminal(width=lambda: 30)
    renderer(STARTED)
    renderer(AgentActivity("Bash: " + "pytest -q tests/" * 20))
    renderer(waiting(300, first=True))
    drawn = [part for part in re.split(r"\r\x1b\[2K|\n", out.getvalue()) if part.startswith(("⠋", "⠙"))]
    assert len(drawn) == 3
    for part in drawn:
        assert len(part) <= 29 and part.endswith(("00:00", "…")), part


def test_the_agents_activity_cannot_repaint_the_screen_through_the_spinner() -> None:
    renderer, out, _ = terminal()
    renderer(STARTED)
    renderer(AgentActivity("Bash: echo \x1b[2J\x1b]0;pwned\x07hi\nthere"))
    assert visible(out.getvalue())[-1] == "⠋ Running… 00:00 · ⚙ Bash: echo hi there"
    assert "pwned" not in out.getvalue() and "\x1b[2J" not in out.getvalue()


def test_a_question_holds_the_spinner_and_shows_the_cursor() -> None:
    renderer, out, clock = terminal()
    renderer(STARTED)
    with renderer.suspended():
        assert visible(out.getvalue())[-1] == ""
        assert out.getvalue().endswith(SHOW)
        held = out.getvalue()
        clock.now += 2
        assert renderer.tick()
        assert out.getvalue() == held
        out.write("Wait or exit? e\n")  # what ask_on_terminal writes meanwhile
    assert visible(out.getvalue())[-2:] == ["Wait or exit? e", "⠋ Running… 00:02"]
    assert out.getvalue().rindex(HIDE) > out.getvalue().rindex(SHOW)


def test_stop_ends_the_spinner_when_the_run_ends_without_an_iteration_finished() -> None:
    renderer, out, _ = terminal()
    renderer(STARTED)
    renderer.stop()
    assert out.getvalue().endswith(CLEAR + SHOW)
    assert not renderer.tick()
    renderer.stop()  # twice is harmless
    assert out.getvalue().endswith(CLEAR + SHOW)


def test_the_spinners_thread_draws_frames_by_itself_and_ends_with_the_iteration() -> None:
    renderer, out, _ = terminal(spin_interval=0.01)
    renderer(STARTED)
    assert wait_until(lambda: "⠹ Running…" in out.getvalue())  # two frames drawn by the thread
    renderer(finished())
    assert wait_until(lambda: not any(thread.name == "ralph-spinner" for thread in threading.enumerate()))
    assert visible(out.getvalue())[-2:] == ["  · S-1 still open · 0/1 · 1s", ""]


def test_a_long_wait_counts_down_in_hours() -> None:
    renderer, out, _ = terminal()
    renderer(waiting(timedelta(hours=2, minutes=1).total_seconds(), first=True))
    assert visible(out.getvalue())[0].startswith("⠋ Waiting… 02:01:00 remaining")
