"""The loop's terminal: the agent's current tool is one line redrawn in place, on terminals only."""

from __future__ import annotations

import io

from ralphloop.cli.render import TerminalRenderer
from ralphloop.core.events import AgentActivity, IterationFinished
from tests.events import iteration_finished, result

CLEAR = "\r\x1b[2K"


def finished() -> IterationFinished:
    return iteration_finished(result=result(duration_s=1.0), wall_s=1.0)


def test_activity_is_redrawn_on_one_line_and_cleared_before_the_next_line() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(out=out, live=True)
    renderer(AgentActivity("Bash: pytest -q"))
    renderer(AgentActivity("Write: src/app.py"))
    renderer(finished())
    text = out.getvalue()
    assert text.startswith(f"{CLEAR}    ⚙ Bash: pytest -q{CLEAR}    ⚙ Write: src/app.py{CLEAR}  · S-1 still open")
    assert text.count("\n") == 1  # the result line alone: the Iteration Metrics block is for -v


def test_activity_is_not_printed_on_a_pipe_or_with_verbose_output() -> None:
    for renderer in (
        TerminalRenderer(out=io.StringIO(), live=False),
        TerminalRenderer(out=io.StringIO(), live=True, verbose=True),
    ):
        renderer(AgentActivity("Bash: make"))
        renderer(finished())
        assert "⚙" not in renderer.out.getvalue()  # type: ignore[attr-defined]
        assert "\x1b" not in renderer.out.getvalue()  # type: ignore[attr-defined]


def test_activity_text_from_the_agent_cannot_repaint_the_screen() -> None:
    out = io.StringIO()
    TerminalRenderer(out=out, live=True)(AgentActivity("Bash: echo \x1b[2J\x1b]0;pwned\x07hi\nthere"))
    text = out.getvalue().removeprefix(CLEAR)
    assert "\x1b" not in text and "\n" not in text
    assert text == "    ⚙ Bash: echo hi there"
