"""The loop's question to the user (at a usage limit, with the policy `ask`), told as a wait: a `Waiting`
event of kind "answer" when it is asked and when it is over, so status.json, the monitor and the
notifications say "waiting for your answer" (and until when) instead of "running"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from ralphloop.core.events import ANSWER, WAITING_WORDS, Waiting
from ralphloop.core.protocols import Clock, EventSink


def ask_user(
    ask: Callable[[str, float], str | None], clock: Clock, emit: EventSink, question: str, timeout_s: float, what: str
) -> str | None:
    """`ask(question, timeout_s)` between two events; the answer, or None when nobody answered in time."""
    now = clock.now()
    message = f"{what}: {WAITING_WORDS}"
    emit(Waiting(ANSWER, message, now + timedelta(seconds=timeout_s), timeout_s, first=True))
    try:
        return ask(question, timeout_s)
    finally:
        emit(Waiting(ANSWER, message, clock.now(), 0.0, done=True))
