"""The notifier: an event sink that sends notifications while the run goes on, never in the loop's way.

Subscribed like the record files (cli/run_cmd.py adds it to the run's sinks). On the loop's thread it only
decides, from the event and what it has seen (events.note_for, pure and quick), and puts the note on a bounded
queue; a daemon thread delivers it (deliver.Channels), each way with its own timeout. A failure is one warning
line, never an exception; a full queue drops the note and says so at the end. The run's end is sent from
`close`, once the feature folder is where it stays (an archived feature moved), and `close` waits for what is
queued at most END_WAIT_S in all. Under kill -9 the thread dies with the process: nothing waits for it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from datetime import tzinfo

from ralphloop.core.events import AgentStarted, Archived, LoopEnded
from ralphloop.notify.deliver import Channels
from ralphloop.notify.events import NEEDS_YOU, Note, Seen, ending_note, note_for, with_page
from ralphloop.notify.settings import END_WAIT_S, TIMEOUT_S, NotifySettings

QUEUE_SIZE = 32  # notes waiting to go out; a run makes a few an iteration, so a full queue means a channel hangs
_PREPARE = "prepare"  # load apprise and read its URLs, before anything is to be sent
_STOP = "stop"


class Notifier:
    """The `notify` section at work for one run: call it with every event, then `close()` once the run ended."""

    def __init__(
        self,
        settings: NotifySettings,
        seen: Seen,
        warn: Callable[[str], None],
        *,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT_S,
        local: tzinfo | None = None,
        page: Callable[[], str | None] | None = None,
    ) -> None:
        self.settings, self.seen, self.warn, self.local = settings, seen, warn, local
        self.page = page  # the address `ralph serve` publishes for the project, if any (project/page.py)
        self.env = os.environ if env is None else env
        self.channels = Channels(settings, self.env, timeout)
        self._queue: queue.Queue[tuple[Note, str] | str] = queue.Queue(QUEUE_SIZE)
        self._thread: threading.Thread | None = None
        self._ending: LoopEnded | None = None
        self._folder = seen.feature_dir
        self._pending = 0  # notes queued or being sent
        self._lock = threading.Lock()
        self._dropped = 0
        self._prepared = False
        self._off = not settings.channels  # nothing to send, or closed, or broken by a bug of ralph's

    def __call__(self, event: object) -> None:
        if self._off:
            return
        try:
            if isinstance(event, LoopEnded):
                self._ending = event  # sent by close(): the end hooks may still archive the feature
            elif isinstance(event, Archived):
                self._folder = event.path
            elif isinstance(event, AgentStarted):
                if self.settings.urls and not self._prepared:  # the loop waits on the agent: a good time
                    self._prepared = True
                    self._put(_PREPARE)
            else:
                note, self.seen = note_for(event, self.seen, self.settings.on, self.env, self.local)
                if note is not None:
                    self._put((self._paged(note), self._folder))
        except Exception as exc:  # a notification must never cost the run: this one stops, the run goes on
            self._off = True
            self._say(f"notification: stopped by an error of ralph's: {type(exc).__name__}: {exc}")

    def close(self, wait_s: float = END_WAIT_S) -> None:
        """Send the run's end (when it is one of `notify.on`) and wait for what is queued, `wait_s` at most."""
        if self._off:
            return
        self._off = True
        deadline = time.monotonic() + wait_s
        if self._ending is not None:
            note = ending_note(self._ending, self.seen, self.settings.on, self.env)
            if note is not None:
                self._put((self._paged(note), self._folder), wait_s=wait_s)
        thread = self._thread
        if thread is None:
            return
        with contextlib.suppress(queue.Full):  # the thread is stuck on a channel: the join below gives up too
            self._queue.put(_STOP, timeout=max(0.0, deadline - time.monotonic()))
        thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            left = self._pending
        if left:
            self._say(f"notification: {left} not sent within {wait_s:g}s of the run's end (given up)")
        if self._dropped:
            self._say(f"notification: {self._dropped} dropped: too many were waiting (a channel is not answering)")

    def _paged(self, note: Note) -> Note:
        """A note that needs the user, with the page's address while a `ralph serve` publishes one."""
        return with_page(note, self.page()) if self.page is not None and note.event in NEEDS_YOU else note

    def _put(self, item: tuple[Note, str] | str, *, wait_s: float | None = None) -> None:
        """Queue `item` for the thread (started with the first); while the loop runs, never wait for room."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="ralph-notify", daemon=True)
            self._thread.start()
        with self._lock:
            self._pending += isinstance(item, tuple)
        try:
            self._queue.put(item, block=wait_s is not None, timeout=wait_s)
        except queue.Full:
            with self._lock:
                self._pending -= isinstance(item, tuple)
            self._dropped += 1

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item == _STOP:
                return
            try:
                warnings = self.channels.send(*item) if isinstance(item, tuple) else self.channels.prepare()
            except Exception as exc:  # ralph's bug in a channel: a warning, and the next note still goes
                warnings = [f"notification: failed: {type(exc).__name__}"]
            finally:
                with self._lock:
                    self._pending -= isinstance(item, tuple)
            for warning in warnings:
                self._say(warning)

    def _say(self, warning: str) -> None:
        with contextlib.suppress(Exception):  # the terminal is gone: nobody to tell
            self.warn(warning)
