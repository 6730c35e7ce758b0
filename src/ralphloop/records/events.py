"""events.jsonl: the run's notable moments, one JSON line each, for the monitor's "recent events"
(which monitor/snapshot.py reads without importing this writer, nor the engine's events), and the waits
of `ralph report`'s timeline (a wait's line also holds its kind and end: {"wait": {"kind", "until"}}).

A sink beside the terminal renderer: it writes what the screen shows in one line per event
(never the agent's raw output), cleaned of escapes and secrets, appended and flushed at once so
a monitor in another process sees it within its polling interval. The file is bounded: past
MAX_BYTES it is moved to events.jsonl.1 when a run starts (one generation kept).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime

from ralphloop.core.errors import RalphError
from ralphloop.core.events import (
    CircuitChanged,
    IterationFinished,
    IterationStarted,
    LoopEnded,
    Notice,
    RunStarted,
    Steered,
    Waiting,
)
from ralphloop.core.protocols import iso
from ralphloop.core.steering import Request, told
from ralphloop.files.store import append_text
from ralphloop.words.figures import iteration_words
from ralphloop.words.redact import redact_text, secret_values
from ralphloop.words.textsafe import one_line, strip_terminal_controls

MAX_BYTES = 1024 * 1024
_LEVELS = {"complete": "ok", "failed": "fail", "interrupted": "warn", "blocked": "warn"}


def describe(event: object) -> tuple[str, str] | None:
    """(level, text) for an event worth a line in the log, or None. Levels: ok, fail, warn, info."""
    if isinstance(event, RunStarted):
        limit = f"up to {event.max_iterations} iterations" if event.max_iterations else "until complete"
        return "info", f"run started: {event.agent}, {limit}, {event.done}/{event.total} done"
    if isinstance(event, IterationStarted):
        return "info", f"iteration {event.number} started: {event.task_id} {event.task_title}{counted_of(event)}"
    if isinstance(event, IterationFinished):
        return _finished(event)
    if isinstance(event, Notice):
        return ("warn" if event.level == "warning" else "info"), event.message
    if isinstance(event, CircuitChanged):
        level = "fail" if event.to_state == "OPEN" else "ok" if event.to_state == "CLOSED" else "warn"
        return level, f"circuit {event.from_state} → {event.to_state}: {event.reason}"
    if isinstance(event, Waiting) and event.first and event.kind == "answer":
        return "warn", f"{event.message} (until {event.until.astimezone():%H:%M:%S})"
    if isinstance(event, Waiting) and event.first:
        return "warn", f"waiting until {event.until.astimezone():%H:%M:%S} ({event.kind}): {event.message}"
    if isinstance(event, Steered):
        return "warn", steered_words(event)
    if isinstance(event, LoopEnded):
        level = "ok" if event.reason.exit_code == 0 else "warn" if event.reason.exit_code == 130 else "fail"
        return level, f"run ended ({event.reason.value}): {event.message}"
    return None


def steered_words(event: Steered) -> str:
    """What the loop did of the user's request, with where and when it was asked: "paused by you at 14:02 (cli)"."""
    return told(Request(event.action, event.source, event.at, event.text, event.now))


def counted_of(event: IterationStarted) -> str:
    """ " (4 / 20)", or " (this run: 2/20 counted so far)" when that differs from the number."""
    tally = event.tally
    words = iteration_words(event.number, tally.counted, tally.uncounted, event.max_iterations, running=True)
    count = words.partition(" · ")[2]
    if count:
        return f" ({count})"
    return f" ({event.number} of {event.max_iterations})" if event.max_iterations else ""


def _finished(event: IterationFinished) -> tuple[str, str]:
    if event.status == "refused":
        what = f"{event.task_id}: completion claim refused"
    elif event.status == "failed" and event.result.failed:
        what = f"{event.task_id}: agent failed" + (f": {event.result.error}" if event.result.error else "")
    elif event.status == "complete":
        what = f"{event.task_id} done"
    elif event.status == "in-progress":
        what = f"{event.task_id} still open"
    else:
        what = f"{event.task_id} {event.status}"
    changed = len(event.files_changed)
    facts = f" · {changed} file{'s' if changed != 1 else ''} changed" if changed else ""
    return _LEVELS.get(event.status, "info"), f"{what}{facts} · {event.done}/{event.total} done"


class EventLog:
    """Subscribes to engine events and appends the notable ones to `path`."""

    def __init__(
        self, path: str, now: Callable[[], datetime], secrets: list[bytes] | None = None, max_bytes: int = MAX_BYTES
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.now = now
        self.secrets = secret_values([os.environ]) if secrets is None else secrets
        self.failed = False  # a full disk must not stop the loop: the log is a view, not a record

    def __call__(self, event: object) -> None:
        found = describe(event)
        if found is None or self.failed:
            return
        if isinstance(event, RunStarted):
            self._rotate()
        level, text = found
        clean = one_line(redact_text(strip_terminal_controls(text), self.secrets), 500)  # masked, then cut
        entry: dict[str, object] = {"time": iso(self.now()), "level": level, "text": clean}
        if isinstance(event, Waiting):  # `ralph report`'s timeline: a wait lasts to `until` or to the next line
            entry["wait"] = {"kind": event.kind, "until": iso(event.until)}
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        try:
            append_text(self.path, line, sync=False, follow=False)  # after a line the agent left cut: a new one
        except (OSError, RalphError):
            self.failed = True

    def _rotate(self) -> None:
        try:
            if os.path.getsize(self.path) > self.max_bytes:
                os.replace(self.path, self.path + ".1")
        except OSError:
            pass
