"""Reading `opencode run --format json` as it arrives, in one pass: the session id, the text parts of the last
message (the final text), the tokens and cost of every `step_finish`, the tools that failed or were refused, the
`error` events, and the tool the agent ran last (live view).

A failure is an `error` event (opencode then exits 1), a non-zero exit, or a clean exit without one finished step.
Its kind comes from the error event (errors.py: the provider's HTTP status, body and headers, which also give a
usage limit's reset), else from opencode's own error log lines on stderr, never from the agent's words. A run ralph
stopped (timeout, the idle timeout, Ctrl+C) is not classified: its error says what opencode was retrying, when its
log lines say. The stream names no model: the model is the session's in opencode's database (session_db.py), else
the one ralph asked for. Free of the backend's settings, so `ralph analyze` reads a saved log without them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ralphloop.agents.fields import count
from ralphloop.agents.json_lines import JsonLinesParser
from ralphloop.agents.opencode import log_lines, session_db
from ralphloop.agents.opencode.activity import is_event, tool_activity, tool_failed
from ralphloop.agents.opencode.errors import Failure, from_event, from_text
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage
from ralphloop.words.textsafe import one_line

# What opencode says, retrying in silence, when the provider's quota or usage limit is spent.
_SPENT = re.compile(r"usage limit|quota|insufficient_quota|billing period", re.IGNORECASE)
_KEEP_DENIALS = 50
# The errors opencode gives a tool call that its permissions refused: a rule's "deny", or an "ask" that
# `opencode run` answers "reject" (nobody is there to answer).
_DENIED = ("The user has specified a rule which prevents you from using", "The user rejected permission to use")


class OpencodeJsonParser(JsonLinesParser):
    """Reads `opencode run --format json` events line by line as they arrive; keeps only what the result needs."""

    def __init__(
        self, started_at: datetime | None = None, *, model: str | None = None, database: Path | None = None
    ) -> None:
        super().__init__()
        self._now = started_at or datetime.now(UTC)
        self._asked_model = model
        self._database = database  # None: opencode's database is not read (a saved log)
        self.session_id = ""
        self.texts: dict[str, list[str]] = {}  # message id → its text parts, for the last message only
        self.final_text = ""
        self.usage: TokenUsage | None = None
        self.cost = 0.0
        self.steps = 0
        self.stop_reason: str | None = None
        self.error: dict[str, Any] | None = None  # the last `error` event's `error`
        self.error_at: datetime | None = None
        self.denials: list[str] = []
        self._doing: str | None = None

    def activity(self) -> str | None:
        return self._doing

    def _wanted(self, event: dict[str, Any]) -> bool:
        return is_event(event)

    def _event(self, event: dict[str, Any]) -> None:
        self.session_id = self.session_id or event["sessionID"]
        kind = event["type"]
        part: dict[str, Any] = event["part"] if isinstance(event.get("part"), dict) else {}
        if kind == "step_start":
            self._doing = "Thinking"
        elif kind == "text" and isinstance(part.get("text"), str):
            self._text(str(part.get("messageID") or ""), part["text"])
        elif kind == "tool_use":
            self._tool(part)
        elif kind == "step_finish":
            self._step(part)
        elif kind == "error" and isinstance(event.get("error"), dict):
            self.error = event["error"]
            self.error_at = _instant(event.get("timestamp"))
            self._doing = None

    def _text(self, message: str, text: str) -> None:
        """The final text is the text parts of the last message that has any (an earlier step's words are not)."""
        if message not in self.texts:
            self.texts = {message: []}
        self.texts[message].append(text)
        self.final_text = "\n".join(self.texts[message])

    def _tool(self, part: dict[str, Any]) -> None:
        doing = tool_activity(part)
        self._doing = doing
        failed = tool_failed(part)
        if failed is None:
            return
        if failed.startswith(_DENIED) or part.get("tool") == "invalid":
            self.denials.append(doing)
            del self.denials[:-_KEEP_DENIALS]
        else:
            self._tool_error(failed)

    def _step(self, part: dict[str, Any]) -> None:
        self.steps += 1
        self.stop_reason = part.get("reason") if isinstance(part.get("reason"), str) else self.stop_reason
        counted = _tokens(part.get("tokens"))
        if counted is not None:
            self.usage = counted if self.usage is None else self.usage + counted
        cost = part.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 < cost < 1e6:
            self.cost += float(cost)
        self._doing = None

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        error = describe_failure(outcome)
        failure: Failure | None = None
        stopped = ralph_stopped(outcome)
        if self.error is not None:
            failure = from_event(self.error, self.error_at or self._now, outcome.stderr_tail)
        elif error is not None and not stopped:
            failure = _from_log(outcome.stderr_tail)
        elif error is None and self.steps == 0:
            error = "opencode ended without finishing a step (no step_finish event)"
        if failure is not None:
            error = failure.message
        elif error is not None and outcome.timed_out:
            retrying = log_lines.last_stream_error(outcome.stderr_tail)
            error = f"{error}; opencode was retrying: {one_line(retrying, 200)}" if retrying else error
            if retrying and _SPENT.search(retrying) and not outcome.interrupted:
                # it waits out a spent quota in silence: the idle timeout ended it, and the limit is what it hit
                limit = UsageLimit("opencode", one_line(f"opencode was waiting out: {retrying}", 300), None)
                failure = Failure(ErrorKind.USAGE_LIMIT, error, limit)
                stopped = False
        kind = None if failure is None or stopped else failure.kind
        model = session_db.model_of(self._database, self.session_id) if self._database else None
        return outcome_result(
            outcome,
            self.final_text,
            error,
            is_error=self.error is not None,
            model=model or self._asked_model,
            cost_usd=round(self.cost, 6) if self.cost > 0 else None,
            tokens=self.usage.all if self.usage else None,
            permission_denials=tuple(self.denials),
            tool_errors=tuple(self.tool_errors),
            usage_limit=failure.limit if failure is not None and kind is ErrorKind.USAGE_LIMIT else None,
            usage=self.usage,
            num_turns=self.steps or None,
            session_id=self.session_id or None,
            stop_reason=self.stop_reason,
            error_kind=kind,
        )


def _from_log(stderr: str) -> Failure | None:
    """A failed run without an `error` event: the last error opencode logged, when it states a kind."""
    said = ""
    for line in log_lines.run_errors(stderr):
        said = line.error or said
    return from_text(said, f"opencode: {one_line(said, 280)}") if said else None


def _tokens(value: Any) -> TokenUsage | None:
    """`step_finish.tokens` in ralph's kinds. opencode's `input` leaves out the cache reads and writes (counted apart
    as `cache.read`, `cache.write`), and its `output` the reasoning tokens, which ralph counts as output. `total`
    is not read: it is their sum for the step."""
    if not isinstance(value, dict):
        return None
    cache: dict[str, Any] = value["cache"] if isinstance(value.get("cache"), dict) else {}
    counts = [_whole(value.get("input")), _whole(value.get("output")), _whole(value.get("reasoning"))]
    cached = [_whole(cache.get("read")), _whole(cache.get("write"))]
    if all(count is None for count in (*counts, *cached)):
        return None
    return TokenUsage(
        input_tokens=counts[0] or 0,
        output_tokens=(counts[1] or 0) + (counts[2] or 0),
        cache_creation_tokens=cached[1] or 0,
        cache_read_tokens=cached[0] or 0,
    )


def _whole(value: Any) -> int | None:
    """A token count: a whole number, not negative, not absurd (a hostile or broken event counts as none)."""
    found = count(value)
    return found if found is not None and found < 10**12 else None


def _instant(value: Any) -> datetime | None:
    """An event's `timestamp` (unix milliseconds) as aware UTC."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**14:
        return datetime.fromtimestamp(value / 1000, UTC)
    return None
