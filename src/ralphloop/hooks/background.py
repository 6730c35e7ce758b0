"""Commands running in threads while the loop goes on, collected later on the loop's thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable

from ralphloop.core.cancel import CancelToken
from ralphloop.hooks.run import CommandRun


class Background:
    """Commands running in threads while the loop goes on (per-iteration hooks with parallel: true)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._finished: list[tuple[Hashable, CommandRun]] = []
        self._running = 0
        # Its own token: stopping background work must not depend on (or trip) the loop's Ctrl+C token.
        self._cancel: CancelToken | None = None

    def start(self, key: Hashable, job: Callable[[CancelToken], CommandRun]) -> None:
        """Run `job` in a daemon thread; it gets the token that `stop(cancel=True)` sets."""
        if self._cancel is None:
            self._cancel = CancelToken()
        token = self._cancel
        with self._lock:
            self._running += 1
        thread = threading.Thread(target=self._work, args=(key, job, token), name=f"ralph-hook-{key}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self, key: Hashable, job: Callable[[CancelToken], CommandRun], token: CancelToken) -> None:
        started = time.monotonic()
        try:
            run = job(token)
        except Exception as exc:  # a broken job is reported as a failed run, never lost with its thread
            run = CommandRun(
                name=str(key),
                exit_code=None,
                duration_s=time.monotonic() - started,
                log_path="",
                start_error=f"{type(exc).__name__}: {exc}",
            )
        with self._lock:
            self._finished.append((key, run))
            self._running -= 1

    def collect(self) -> list[tuple[Hashable, CommandRun]]:
        """The runs finished since the last collect, without waiting for the others."""
        with self._lock:
            finished, self._finished = self._finished, []
        self._threads = [thread for thread in self._threads if thread.is_alive()]
        return finished

    @property
    def running(self) -> int:
        """How many jobs have not finished yet."""
        with self._lock:
            return self._running

    def stop(self, *, cancel: bool) -> list[tuple[Hashable, CommandRun]]:
        """Wait for every job (after stopping their process groups when `cancel`); return what finished."""
        token = self._cancel
        if cancel and token is not None:
            token.set()
        for thread in self._threads:
            thread.join()
        self._threads = []
        # A set token would cancel every later job at once: the next start gets a fresh one.
        if token is not None:
            token.close()
            self._cancel = None
        return self.collect()
