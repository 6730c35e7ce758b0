"""control.json: what the user asked of a loop (issue 36: `ralph pause`, `resume`, `stop`, `say`, `answer`, and the
page's buttons), kept in the loop's state folder so that it outlives ralph: a pause survives a crash and a restart,
a `say` waits for the next prompt.

Every change is a read-modify-write under an exclusive lock on control.json.lock (a command and the loop, or two
commands, at once), written atomically: the file is whole at every instant. The loop reads it between iterations
(and each second while it is paused or waits for an answer) and takes out what it used.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.events import RunStarted
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import EventSink
from ralphloop.core.steering import Request, Steering
from ralphloop.core.waiting import await_answer, hold_paused, steered
from ralphloop.files.read import read_json_object
from ralphloop.files.safe_read import FileRefused
from ralphloop.files.store import atomic_write_json, held


class ControlFile:
    """One loop's control.json."""

    def __init__(self, path: str, since: datetime | None = None) -> None:
        self.path = path
        self.lock = path + ".lock"
        self.since = since  # when this run was built: a stop or an answer older than that was for another run

    def read(self) -> Steering:
        """What it holds now; a missing or damaged file holds nothing (a refused one too: the loop runs on)."""
        try:
            found = read_json_object(self.path, "control.json")
        except FileRefused:
            return Steering()
        if found is None:
            return Steering()
        found.pop("schema_version", None)
        try:
            return msgspec.convert(found, Steering)
        except msgspec.ValidationError:
            return Steering()

    def ask(self, request: Request) -> Steering:
        """`request` added (FileRefused, OSError when it cannot be written); what the file holds now."""
        with held(self.lock):
            steering = self.read().plus(request)
            self._write(steering)
        return steering

    def used(self, requests: tuple[Request, ...], emit: EventSink) -> None:
        """The says and answers `requests` taken out, used (once), and told."""
        if requests:
            with held(self.lock):
                self._write(self.read().without(tuple(each.id for each in requests)))
            for each in requests:
                steered(each, emit)

    # the loop's side: between iterations
    def hold(self, clock: Clock, cancel: CancelToken, emit: EventSink) -> Request | None:
        """No agent starts while the user's pause holds (core/waiting.hold_paused); the stop asked meanwhile or
        before, told, if any (None: go on, or interrupted: `cancel` says)."""
        steering = hold_paused(clock, cancel, emit, self.read)
        if steering is None or steering.stop is None:
            return None
        steered(steering.stop, emit)
        return steering.stop

    def unused(self) -> tuple[Request, ...]:
        """The answers and guidance no prompt had yet: the next one's."""
        steering = self.read()
        return (*steering.answers, *steering.guidance)

    def await_answer(
        self, clock: Clock, cancel: CancelToken, emit: EventSink, what: str, seconds: float
    ) -> Request | None:
        """The loop needs a human: wait for an answer (left for the next prompt) or a stop (told) at most `seconds`
        (core/waiting.await_answer); None: nobody answered in time, or interrupted, or no wait (`seconds` 0)."""
        steering = await_answer(clock, cancel, emit, self.read, what, seconds) if seconds > 0 else None
        if steering is None:
            if seconds > 0:  # the question is over: an answer that comes now is for none (and no prompt's)
                with held(self.lock):
                    late = self.read()
                    self._write(late.without(tuple(each.id for each in late.answers)))
            return None
        if steering.stop is not None:
            steered(steering.stop, emit)
            return steering.stop
        return steering.answers[0]

    def take_answer(self, emit: EventSink) -> str | None:
        """The first answer waiting, used (a question on the terminal took it) and told; None when there is none."""
        with held(self.lock):
            answers = self.read().answers
            if answers:
                self._write(self.read().without((answers[0].id,)))
        if not answers:
            return None
        steered(answers[0], emit)
        return answers[0].text

    def stop_asked(self) -> bool:
        """Whether a stop is asked now: a long wait (a usage limit's, a backoff) ends for it."""
        return self.read().stop is not None

    def stopped_early(self, reason: ExitReason | None, emit: EventSink, cancel: CancelToken) -> Request | None:
        """After an interruption (`reason`): the user's stop that caused it, told, if that is what it was: `ralph
        stop --now` (its Ctrl+C), or a stop that ended a wait (no signal came: `cancel` is not set)."""
        stop = self.read().stop if reason is ExitReason.INTERRUPTED else None
        if stop is None or not (stop.now or not cancel.is_set()):
            return None
        steered(stop, emit)
        return stop

    def forget_stop(self) -> None:
        """A stop (and an answer) is for the loop that was running: the next run starts without those asked before
        it was built (a pause and guidance stay; a stop asked since, while it took its lock, is kept for it)."""
        with held(self.lock):
            steering = self.read()
            old = steering.stop is not None and (self.since is None or steering.stop.at < self.since)
            stale = tuple(each.id for each in steering.answers if self.since is None or each.at < self.since)
            if old or stale:
                self._write(msgspec.structs.replace(steering.without(stale), stop=None if old else steering.stop))

    def __call__(self, event: object) -> None:
        """A record of the run's: when it starts, the stop asked of the last one is forgotten (it held the lock)."""
        if isinstance(event, RunStarted):
            self.forget_stop()

    def _write(self, steering: Steering) -> None:
        atomic_write_json(self.path, msgspec.to_builtins(steering))
