"""Reading aider's plain-text output as it arrives, in one pass: its banner (the model it uses), the model's reply
(the final text), its usage reports (tokens and cost), the error it ends on, and the edit being written.

Aider has no structured output: its own lines and the model's reply share stdout. Its own lines have fixed shapes
(lines.py), and their order is what tells them from a reply that quotes them: every reply is followed by aider's
usage report, so a failure is only read after the last one (errors.py) and a quoted error is never taken for one.
Aider exits 0 when a request failed: the error it printed last, not the exit code, says the run failed.
Free of the backend's settings, so `ralph analyze` reads a saved log without loading the run's configuration.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime

from ralphloop.agents.aider import lines
from ralphloop.agents.aider.errors import classify
from ralphloop.agents.json_lines import LineBuffer
from ralphloop.agents.text import KEEP_BYTES, describe_failure, outcome_result, ralph_stopped
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage
from ralphloop.words.textsafe import one_line, strip_terminal_controls

_KEEP_AFTER = 400  # lines kept since the last usage report: an error block is a few lines
_LINE_CUT = 4000  # characters of such a line kept
_NONE, _BANNER, _ANNOUNCING, _BODY = range(4)


@dataclass(frozen=True, slots=True)
class _Failure:
    name: str  # the litellm exception class
    text: str  # from its first line to the end of the output
    retrying: bool  # aider was waiting to try again: the process was stopped, it did not give up


class AiderTextParser:
    """Reads `aider --message-file F --no-pretty` output line by line; keeps only what the result needs."""

    def __init__(self, started_at: datetime | None = None, *, model: str | None = None) -> None:
        self._lines = LineBuffer()
        self._now = started_at or datetime.now(UTC)
        self._asked_model = model
        self._kept: deque[str] = deque()  # the final text's lines: after the banner, the last KEEP_BYTES
        self._kept_bytes = 0
        self._state = _NONE
        self.version = ""
        self.model = ""  # the model aider's banner names
        self.edit_format = ""
        self.usage: TokenUsage | None = None
        self.cost: float | None = None  # the session's cost, from aider's last usage report
        self.replies = 0  # usage reports: one per request that got its answer
        self._cost_below = False
        self._after: deque[str] = deque(maxlen=_KEEP_AFTER)  # aider's lines since the last usage report
        self.edited: list[str] = []  # "Applied edit to PATH"
        self._file = ""  # the last line that may name the file an edit block changes
        self._error_name = ""
        self._doing: str | None = None

    def activity(self) -> str | None:
        return self._doing

    def feed(self, data: bytes) -> None:
        for line in self._lines.lines(data):
            self._line(bytes(line).decode("utf-8", "replace").rstrip("\r"))

    def _line(self, raw: str) -> None:
        self._keep(raw)
        text = strip_terminal_controls(raw).rstrip()  # every fact below is drawn on a screen some day
        if self._state != _BODY and self._banner(text):
            return
        found = lines.report(text)
        if found is not None:
            self.usage = found.usage if self.usage is None else self.usage + found.usage
            self.replies += 1
            self.cost = found.session_cost if found.session_cost is not None else self.cost
            self._cost_below = found.cost_below
            self._after.clear()
            self._doing = None
            return
        if self._cost_below and text:
            self._cost_below = False
            cost = lines.session_cost(text)
            if cost is not None:
                self.cost = cost
                return
        self._after.append(text[:_LINE_CUT])
        self._follow(text)

    def _banner(self, text: str) -> bool:
        """Aider's banner, once: its version, then the model line; the announcements after it. True for a line
        of it (none of it is the reply)."""
        if self._state == _NONE:
            banner = lines.BANNER.fullmatch(text)
            if banner is None:
                return False
            self.version, self._state = banner["version"], _BANNER
            return True
        if self._state == _BANNER:
            found = lines.MODEL.fullmatch(text)
            if found is None:  # a line that only looked like the banner
                self._state, self.version = _NONE, ""
                return False
            self.model, self.edit_format = found["model"], found["format"]
            self._state = _ANNOUNCING
            return True
        if lines.ANNOUNCED.fullmatch(text):
            return True
        self._state = _BODY  # the reply starts: what came before is aider's start-up, not the final text
        first = self._kept.pop()
        self._kept.clear()
        self._kept.append(first)
        self._kept_bytes = len(first) + 1
        return False

    def _follow(self, text: str) -> None:
        """What aider is doing, for the live view: the file of the edit block being written, or a retry."""
        error = lines.ERROR_START.fullmatch(text)
        retry = lines.RETRYING.fullmatch(text)
        applied = lines.APPLIED.fullmatch(text)
        if error is not None:
            self._error_name = error["name"]
        elif retry is not None:
            self._doing = f"Retrying in {retry['seconds']} s ({self._error_name or 'error'})"
        elif lines.SEARCH.fullmatch(text):
            self._doing = f"Edit: {one_line(self._file, 100)}" if self._file else "Edit"
        elif lines.REPLACE.fullmatch(text):
            self._doing = None
        elif applied is not None:
            self._doing = None
            if applied["verb"] == "Applied":
                self.edited.append(applied["path"])
        elif text.strip() and not text.startswith("```"):
            self._file = text.strip()

    def _keep(self, raw: str) -> None:
        self._kept.append(raw)
        self._kept_bytes += len(raw) + 1
        while self._kept_bytes > KEEP_BYTES and len(self._kept) > 1:
            self._kept_bytes -= len(self._kept.popleft()) + 1

    def final_text(self) -> str:
        """The model's reply and aider's notes after its banner (the whole output when there was no banner)."""
        text = "\n".join(self._kept)
        return text[-KEEP_BYTES:].strip("\n")

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        for line in self._lines.rest():
            self._line(bytes(line).decode("utf-8", "replace").rstrip("\r"))
        error = describe_failure(outcome)
        failure = self._failure()
        said = failure.text if failure is not None and not failure.retrying else ""
        gave_up = next((line for line in reversed(self._after) if lines.GAVE_UP.fullmatch(line)), "")
        if said:
            error = f"aider reported an error: {one_line(said, 300)}"
        elif failure is not None and error is not None:
            error = f"{error}; aider was retrying: {one_line(failure.text, 200)}"
        elif error is None and gave_up:
            error = f"aider gave up: {gave_up}"
        elif error is None and self.replies == 0:
            error = "aider ended without a reply (no usage report: no request got its answer)"
        kind: ErrorKind | None = None
        stopped = ralph_stopped(outcome)
        if failure is not None and said and not stopped:
            found = classify(failure.name, said)
            if found is not None:
                kind, error = found
        return outcome_result(
            outcome,
            self.final_text(),
            error,
            is_error=bool(said),
            model=self.model or self._asked_model,
            cost_usd=self.cost,
            tokens=self.usage.all if self.usage else None,
            usage=self.usage,
            num_turns=self.replies or None,
            error_kind=kind,
        )

    def _failure(self) -> _Failure | None:
        """The error block aider ended on: the last `litellm.<Class>: ` line after the last usage report, with
        every line after it."""
        after = list(self._after)
        for index in range(len(after) - 1, -1, -1):
            found = lines.ERROR_START.fullmatch(after[index])
            if found is not None:
                block = [line for line in after[index:] if line.strip()]
                retrying = any(lines.RETRYING.fullmatch(line) for line in block)
                return _Failure(found["name"], "\n".join(block), retrying)
        return None
