"""The snapshot `ralph serve` pushes, kept current: re-read when a file it was read from changes (their stamps are
polled, a handful of stat calls), and at least every REREAD_S (a loop that dies releases its lock without changing
any file). A new version only when what the page shows changed, so the page gets nothing twice.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ralphloop.web.snapshot import Features, build

REREAD_S = 2.0


class Source:
    """The current snapshot as JSON, and its version: one for every client, safe to ask from several threads."""

    def __init__(
        self,
        features: Features,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.features = features
        self.now = now
        self.monotonic = monotonic
        self.version = 0
        self.body = ""
        self._shown: object = None
        self._watched: list[str] = []
        self._stamps: tuple[object, ...] = ()
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def current(self) -> tuple[int, str]:
        """(version, JSON) of the snapshot, read again first when a file changed or REREAD_S has passed."""
        with self._lock:
            stamps = tuple(_stamp(path) for path in self._watched)
            if stamps != self._stamps or self.monotonic() - self._read_at >= REREAD_S:
                self._read()
            return self.version, self.body

    def _read(self) -> None:
        shown = self.features.paths()
        snapshot, watched = build(shown, self.now(), self.features.fleets)
        self._watched = watched
        self._stamps = tuple(_stamp(path) for path in watched)
        self._read_at = self.monotonic()
        if snapshot["features"] != self._shown:  # the time alone changed: nothing new to show
            self._shown = snapshot["features"]
            self.version += 1
            self.body = json.dumps(snapshot, ensure_ascii=False, separators=(",", ":"))


def _stamp(path: str) -> object:
    """What changes when a file is written: a new inode for an atomic rewrite, else its time and size."""
    if not path:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)
