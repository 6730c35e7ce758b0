"""A wait the user can watch and interrupt: a Waiting event about once a second until it is over."""

from __future__ import annotations

from datetime import timedelta

from ralphloop.core.cancel import CancelToken
from ralphloop.core.events import Slot, Waiting
from ralphloop.core.protocols import Clock, EventSink


def count_down(
    clock: Clock,
    cancel: CancelToken,
    emit: EventSink,
    seconds: float,
    kind: str,
    message: str,
    slot: Slot | None = None,
) -> bool:
    """Wait `seconds` with a countdown; False when interrupted (Ctrl+C wakes the sleep at once)."""
    until_mono = clock.monotonic() + seconds
    until = clock.now() + timedelta(seconds=seconds)
    first = True
    try:
        while True:
            if cancel.is_set():
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
