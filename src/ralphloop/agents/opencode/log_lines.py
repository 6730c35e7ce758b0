"""opencode's own log lines, which ralph has it print on stderr (`--print-logs --log-level ERROR`).

opencode 1.18.33 logs in logfmt, one event a line, a value in double quotes (with backslash escapes) when it holds
a space:
  timestamp=2026-11-27T14:56:41.376Z level=ERROR run=94991db7 message=failed ref=err_9021620b
      error="ProviderModelNotFoundError: Model not found: fake/nope." cause="ProviderModelNotFoundError: …"
  timestamp=… level=ERROR run=f426e19d message="stream error" providerID=fake modelID=gpt-fake …
      error.error="AI_APICallError: You exceeded your current quota, please check your plan and billing details."
The `failed` line names what its `error` event only calls "Unexpected server error" (the same `ref`); a
`stream error` line is written at every failed request, also those it then retries in silence (the `error` event
comes only once it gives up, or never when a `retry-after` tells it to wait for hours).

Pure: no I/O; no input makes these functions raise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

# The start of one of opencode's log lines: specific enough not to take another program's logfmt for one.
LINE_START = re.compile(r"^timestamp=\S+ level=(?P<level>[A-Z]+) run=[0-9A-Za-z]+ ")
_PAIR = re.compile(r'(?P<key>[A-Za-z_][\w.]*)=(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>\S*))')
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
# Logged when opencode cannot download its model catalogue (models.dev): no request of the run failed.
_NOT_THE_RUN = frozenset({"Failed to fetch models.dev", "share subscriber failed"})
_MAX_LINE = 64 * 1024


class LogLine(NamedTuple):
    """One of opencode's log lines: its level and its fields (a NamedTuple: the monitor and `ralph logs` load this
    module, and dataclasses costs them ~10 ms)."""

    level: str
    fields: dict[str, str]

    @property
    def message(self) -> str:
        return self.fields.get("message", "")

    @property
    def error(self) -> str:
        """What failed, on one line: the `error.error` or `error` field, else the first line of `cause`."""
        for key in ("error.error", "error"):
            if self.fields.get(key):
                return self.fields[key].strip()
        cause = self.fields.get("cause", "").strip()
        return cause.splitlines()[0] if cause else ""


def parse(line: str) -> LogLine | None:
    """The log line `line` is, or None when it is not one of opencode's."""
    if len(line) > _MAX_LINE:
        line = line[:_MAX_LINE]
    start = LINE_START.match(line)
    if start is None:
        return None
    fields = {m["key"]: _unescape(m["quoted"]) if m["quoted"] is not None else m["bare"] for m in _PAIR.finditer(line)}
    return LogLine(start["level"], fields)


def run_errors(text: str) -> Iterator[LogLine]:
    """The ERROR lines of `text` (stderr) about the run itself, in order: not the model catalogue's download."""
    for raw in text.splitlines():
        found = parse(raw.strip())
        if found is not None and found.level == "ERROR" and found.message not in _NOT_THE_RUN:
            yield found


def failed_with(text: str, ref: str) -> str:
    """The error of the `failed` line with reference `ref` (an `UnknownError` event's `data.ref`); "" if none."""
    for found in run_errors(text):
        if found.fields.get("ref") == ref and found.error:
            return found.error
    return ""


def last_stream_error(text: str) -> str:
    """The last request failure opencode logged (`stream error`), what a silent retry waits on; "" if none."""
    said = ""
    for found in run_errors(text):
        if found.message == "stream error" and found.error:
            said = found.error
    return said


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1], m[1]), value)
