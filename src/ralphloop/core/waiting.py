"""The waits a user can watch and interrupt, for the loop (engine/waits.py) and the coordinator of many loops alike:
a countdown that emits a `Waiting` event about once a second until it is over, and a question to the user (at a
usage limit, with the policy `ask`) told as a wait of kind "answer", so status.json, the monitor and the
notifications say "waiting for your answer" (and until when) instead of "running"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.events import ANSWER, WAITING_WORDS, Slot, Steered, Waiting
from ralphloop.core.protocols import EventSink
from ralphloop.core.steering import PAUSED, Request, Steering, by_you


def count_down(
    clock: Clock,
    cancel: CancelToken,
    emit: EventSink,
    seconds: float,
    kind: str,
    message: str,
    slot: Slot | None = None,
    ends: Callable[[], bool] | None = None,
) -> bool:
    """Wait `seconds` with a countdown; False when interrupted (Ctrl+C wakes the sleep at once) or when `ends()`,
    asked each second, says the wait is over (the user's `ralph stop` during a long wait)."""
    until_mono = clock.monotonic() + seconds
    until = clock.now() + timedelta(seconds=seconds)
    first = True
    try:
        while True:
            if cancel.is_set() or (ends is not None and ends()):
                return False
            left = until_mono - clock.monotonic()
            if left <= 0:
                return True
            emit(Waiting(kind, message, until, left, first=first, slot=slot))
            first = False
            clock.sleep(min(1.0, left), cancel.fileno())
            cancel.quiet()  # woken by a signal that did not cancel: wait on
    finally:
        emit(Waiting(kind, message, until, 0.0, done=True, slot=slot))


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


def steered(request: Request, emit: EventSink) -> None:
    """What the user asked, acted on: told (events.jsonl, the screen, the notifications)."""
    emit(Steered(request.action, request.source, request.at, request.text, request.now))


def hold_paused(clock: Clock, cancel: CancelToken, emit: EventSink, read: Callable[[], Steering]) -> Steering | None:
    """While the user's pause holds and no stop is asked: a wait of kind "paused", its file read once a second.
    What ended it (a resume, a stop), or None when interrupted. No agent starts meanwhile; a pause has no end of
    its own, so its Waiting's `until` is when it began."""
    steering = read()
    if steering.paused is None or steering.stop is not None:
        return steering
    steered(steering.paused, emit)
    message = by_you(steering.paused, "paused") + "; `ralph resume` goes on"
    began = clock.now()
    try:
        first = True
        while not cancel.is_set():
            emit(Waiting(PAUSED, message, began, 0.0, first=first))
            first = False
            clock.sleep(1.0, cancel.fileno())
            cancel.quiet()
            steering = read()
            if steering.paused is None or steering.stop is not None:
                if steering.paused is None and steering.resumed is not None:
                    steered(steering.resumed, emit)
                return steering
        return None
    finally:
        emit(Waiting(PAUSED, message, clock.now(), 0.0, done=True))


def await_answer(
    clock: Clock, cancel: CancelToken, emit: EventSink, read: Callable[[], Steering], what: str, seconds: float
) -> Steering | None:
    """The loop needs a human (`what`: why): a wait of kind "answer" for `ralph answer` (or the page's), at most
    `seconds`, its file read once a second; what ended it (an answer, a stop), or None (nobody answered in time,
    or interrupted: `cancel` says)."""
    until_mono = clock.monotonic() + seconds
    until = clock.now() + timedelta(seconds=seconds)
    message = f"{what}: {WAITING_WORDS} (ralph answer TEXT)"
    first = True
    try:
        while not cancel.is_set():
            steering = read()
            if steering.answers or steering.stop is not None:
                return steering
            left = until_mono - clock.monotonic()
            if left <= 0:
                return None
            emit(Waiting(ANSWER, message, until, left, first=first))
            first = False
            clock.sleep(min(1.0, left), cancel.fileno())
            cancel.quiet()
        return None
    finally:
        emit(Waiting(ANSWER, message, clock.now(), 0.0, done=True))
