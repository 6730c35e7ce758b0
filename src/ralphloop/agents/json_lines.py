"""A CLI's JSON-lines stream as it arrives: chunks of bytes in, whole lines out (Claude Code's stream-json,
Codex's `exec --json`). A line longer than MAX_LINE_BYTES is dropped whole rather than held in memory.
JsonLinesParser is what every JSON-lines backend's parser shares: lines in, each JSON object to its `_event`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

MAX_LINE_BYTES = 16 * 1024 * 1024


class LineBuffer:
    """The bytes of a line not finished yet, carried from chunk to chunk."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._partial = bytearray()
        self._skipping = False  # inside a line past the limit: its rest is dropped up to its newline

    def lines(self, data: bytes) -> Iterator[bytes | bytearray]:
        """Each line `data` completes. A line whose start came in earlier chunks is completed in place and
        given as the buffer itself, never copied: use it before asking for the next one."""
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            yield from self._complete(data[start:end])
            start = end + 1
        if not self._skipping:
            self._partial += data[start:]
            if len(self._partial) > self.limit:
                self._partial.clear()
                self._skipping = True

    def rest(self) -> Iterator[bytes | bytearray]:
        """The last line, when the stream ended without its newline."""
        if self._partial:
            yield from self._complete(b"")

    def _complete(self, piece: bytes) -> Iterator[bytes | bytearray]:
        if self._skipping:
            self._skipping = False
            self._partial.clear()
            return
        if not self._partial:
            yield piece
            return
        self._partial += piece
        try:
            yield self._partial
        finally:
            self._partial.clear()


def json_object(line: bytes | bytearray | str) -> dict[str, Any] | None:
    """The JSON object a line holds, or None (not JSON, too deeply nested, or another JSON value)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def log_event(line: str, accepts: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The CLI's event one line of a saved log holds: a JSON object `accepts` takes; None for any other line
    (plain output, a `[stderr]` line, another CLI's JSON), which the monitor shows as it is."""
    if not line.startswith("{"):
        return None
    event = json_object(line)
    return event if event is not None and accepts(event) else None


def typed(event: dict[str, Any]) -> bool:
    """Whether a JSON object has a `type` string, as every event of a JSON-lines CLI does."""
    return isinstance(event.get("type"), str)


class JsonLinesParser:
    """The skeleton of a JSON-lines backend's parser: `feed` hands each whole line's JSON object to `_event` (a
    line that is not one is passed over, and so is an object `_wanted` turns down); `_rest` reads the last line,
    when the stream ended without its newline, before `finish` makes the result. It also keeps the tool errors the
    result reports: the last KEEP_TOOL_ERRORS, each cut to its last TOOL_ERROR_CHARS characters."""

    KEEP_TOOL_ERRORS = 20  # the last ones matter for "same error"
    TOOL_ERROR_CHARS = 2000

    def __init__(self) -> None:
        self._lines = LineBuffer()
        self.tool_errors: list[str] = []

    def feed(self, data: bytes) -> None:
        for line in self._lines.lines(data):
            self._line(line)

    def _line(self, line: bytes | bytearray) -> None:
        event = json_object(line)
        if event is not None and self._wanted(event):
            self._event(event)

    def _wanted(self, event: dict[str, Any]) -> bool:
        """Whether a JSON object on a line is one of the CLI's events (all are, unless a parser says otherwise)."""
        return True

    def _event(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def _rest(self) -> None:
        """Read the stream's last line when it ended without its newline."""
        for line in self._lines.rest():
            self._line(line)

    def _tool_error(self, text: str) -> None:
        self.tool_errors.append(text[-self.TOOL_ERROR_CHARS :])
        del self.tool_errors[: -self.KEEP_TOOL_ERRORS]
