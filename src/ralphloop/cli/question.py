"""The question `ralph run` asks on its terminal (at a usage limit, under `--on-usage-limit ask`): wait or exit,
with a timeout. Ctrl+C ends it; an answer given elsewhere (`ralph answer`, the page's; issue 36) counts as typed."""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from ralphloop.core.cancel import CancelToken

if TYPE_CHECKING:
    from ralphloop.cli.render import TerminalRenderer
    from ralphloop.start.build import Built


Answered = Callable[[], "str | None"]  # an answer given elsewhere, taken (None: none yet)


def answers_of(built: Built) -> Answered | None:
    """Where the run's answers given elsewhere are taken from: its control file."""
    control = built.run.control
    return partial(control.take_answer, built.run.emit) if control is not None else None


def ask_over_spinner(
    renderer: TerminalRenderer,
    question: str,
    timeout: float,
    wake: CancelToken,
    answered: Answered | None,
) -> str | None:
    """ask_on_terminal with the spinner's line held, so that the question is not drawn over."""
    with renderer.suspended():
        return ask_on_terminal(question, timeout, wake, answered)


def ask_on_terminal(
    question: str, timeout: float, wake: CancelToken | None = None, answered: Answered | None = None
) -> str | None:
    """Ask on the terminal; "exit", "wait", or None when nobody answered within `timeout` seconds (or the
    answer was empty): the question says what that means (UsagePolicy.question), the caller decides it.
    Ctrl+C or a hang-up (each sets `wake`) ends the question at once: the run is stopped. `answered`, asked once a
    second, is an answer given elsewhere (`ralph answer`), which counts as typed here."""
    sys.stdout.write(f"{question} [w]ait/[e]xit: ")
    sys.stdout.flush()
    until = time.monotonic() + timeout
    waits = [sys.stdin, *([wake.fileno()] if wake is not None else [])]
    while (left := until - time.monotonic()) > 0:
        ready, _, _ = select.select(waits, [], [], min(left, 1.0))  # a second at most: an answer given elsewhere
        if wake is not None and wake.fileno() in ready:
            if wake.is_set():
                sys.stdout.write("\n")
                return "exit"
            wake.quiet()  # a signal that did not cancel: the question still waits
        if sys.stdin in ready:
            break
        given = answered() if answered is not None else None
        if given is not None:
            sys.stdout.write(f"{given} (ralph answer)\n")
            return _word(given)
    else:
        sys.stdout.write("\nno answer\n")
        return None
    try:
        answer = sys.stdin.readline().strip().lower()
    except (OSError, ValueError):  # the terminal is gone: nobody will answer
        return None
    return _word(answer)


def _word(answer: str) -> str | None:
    """An answer's meaning: "exit" (e, n, q...), "wait" (anything else); None for nothing (Enter alone takes what
    the question said happens unless told)."""
    answer = answer.strip().lower()
    if not answer:
        return None
    return "exit" if answer[:1] in ("e", "n", "q") else "wait"
