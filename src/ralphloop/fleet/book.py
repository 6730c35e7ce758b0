"""The coordinator's records: fleet.jsonl, one line per step, appended and fsynced *before* the step's effect
(so a kill at any instant leaves the step either undone or named), and fleet.json, the atomic summary that
`ralph status`, the monitor and `ralph serve` read (state/fleet.py owns its shape)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from typing import Any

from ralphloop.core.clock import Clock
from ralphloop.core.protocols import iso
from ralphloop.files.read import read_tail_lines
from ralphloop.files.store import atomic_write_text
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.fleet import FLEET, LOOP, fleet_paths


class Book:
    def __init__(self, paths: FeaturePaths, clock: Clock) -> None:
        self.summary_path, self.journal_path, self.lock_path = fleet_paths(paths)
        self.clock = clock
        self.fleet: dict[str, Any] = {}
        self.loops: dict[str, dict[str, Any]] = {}  # story → its row, in the order they were first seen
        self.lock = threading.RLock()  # the coordinator's loop and its merge queue's thread both write

    def log(self, event: str, **fields: Any) -> None:
        """One step, on disk before its effect."""
        # "mono": the monotonic clock, for the time between steps (bench/parallel.py: the cost of a merge)
        stamp = {"at": iso(self.clock.now()), "mono": round(self.clock.monotonic(), 4)}
        line = json.dumps({**stamp, "event": event, **fields}, ensure_ascii=False)
        with self.lock:
            fd = os.open(
                self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
            )
            try:
                os.write(fd, (line + "\n").encode("utf-8", "replace"))
                os.fsync(fd)
            finally:
                os.close(fd)

    def history(self) -> Iterator[dict[str, Any]]:
        """The journal's whole lines, oldest first (a torn last line, from a kill mid-write, is skipped)."""
        for raw in read_tail_lines(self.journal_path, 64 << 20) or []:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("event"), str):
                yield entry

    def now(self) -> str:
        return iso(self.clock.now())

    def loop(self, story: str) -> dict[str, Any]:
        with self.lock:
            return self.loops.setdefault(story, LOOP.load({"story": story}))

    def set(self, story: str, **fields: Any) -> None:
        with self.lock:
            self.loop(story).update(fields)

    def write(self, **fields: Any) -> None:
        """fleet.json now: the fleet's fields, every loop, the queue."""
        with self.lock:
            self.fleet.update(fields)
            self.fleet["updatedAt"] = iso(self.clock.now())
            self.fleet["loops"] = [LOOP.dump(row) for row in self.loops.values()]
            body = FLEET.dump(self.fleet, versioned=True)
            atomic_write_text(self.summary_path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
