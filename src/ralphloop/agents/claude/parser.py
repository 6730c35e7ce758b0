"""Reading Claude Code's stream-json as it arrives, in one pass, keeping only what the result needs:
the session id, the model that answered, the final text, usage and cost, permission denials, tool errors,
usage limits, and what the agent is doing now (for the live view).

`is_error` is read even with subtype "success", because API and auth failures arrive that way;
errors.py then says which kind of failure it was and what to do about it. Free of the backend's
settings, so `ralph analyze` reads a saved log without loading the run's configuration.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from msgspec.structs import replace

from ralphloop.agents.claude.activity import tool_activity
from ralphloop.agents.claude.errors import Facts, classify
from ralphloop.agents.claude.limit_events import from_claude_event, windows_of
from ralphloop.agents.claude.result_fields import denials, model_used, number, string, token_usage
from ralphloop.agents.fields import block_text, blocks, mapping, whole
from ralphloop.agents.json_lines import JsonLinesParser
from ralphloop.agents.text import describe_failure, limit_in_text, local_zone, outcome_result
from ralphloop.core.limits import LimitWarning, UsageLimit, UsageWindow
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome
from ralphloop.words.textsafe import one_line

# Above this, a tool event is skimmed (see StreamJsonParser._skimmed), not parsed.
SKIM_BYTES = 1024 * 1024
_USER = re.compile(rb'"type"\s*:\s*"user"')
_ASSISTANT = re.compile(rb'"type"\s*:\s*"assistant"')
_TOOL_NAME = re.compile(rb'"type"\s*:\s*"tool_use"\s*,\s*"id"\s*:\s*"[^"]*"\s*,\s*"name"\s*:\s*"([^"]{1,100})"')


class StreamJsonParser(JsonLinesParser):
    """Reads stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self, started_at: datetime | None = None, *, max_turns: int | None = None) -> None:
        super().__init__()
        self.result: dict[str, Any] | None = None
        self.last_text = ""
        self.session_id = ""
        self.model: str | None = None
        self.usage_limit: UsageLimit | None = None
        self.limit_warning: LimitWarning | None = None
        self.windows: dict[str, UsageWindow] = {}  # the account's usage windows, the last report of each
        self.error_code = ""  # the last synthetic assistant event's `error`
        self.api_status: int | None = None
        self.api_type = ""
        self._activity: str | None = None
        self._max_turns = max_turns
        self._now = started_at or datetime.now(UTC)
        self._local = local_zone()

    def activity(self) -> str | None:
        return self._activity

    def _line(self, line: bytes | bytearray) -> None:
        if len(line) > SKIM_BYTES and self._skimmed(line):
            return
        super()._line(line)

    def _skimmed(self, line: bytes | bytearray) -> bool:
        """Read what matters from a huge tool event without parsing it: json.loads of a line costs 3 to 9
        times its size in memory (text, then the decoded tool output), so a 10 MB tool result would cost
        90 MB. The `result` event and tool errors are always parsed whole."""
        head = bytes(line[:512])
        if _USER.search(head) and b'"is_error":true' not in line:
            self._activity = None  # a tool answered; its (successful) output is not needed
            return True
        if _ASSISTANT.search(head):
            found = _TOOL_NAME.search(line, 0, 65536)
            if found:
                self._activity = found.group(1).decode("utf-8", "replace")
            return True
        return False

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        if kind in ("rate_limit_event", "assistant", "result"):
            found = from_claude_event(event, self._now, self._local)
            if isinstance(found, UsageLimit):
                self.usage_limit = _merge_limits(self.usage_limit, found)
            elif isinstance(found, LimitWarning):
                self.limit_warning = found
            self.windows.update((window.name, window) for window in windows_of(event))
        if kind == "result":
            self.result = event
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._tool_errors(event)
            self._activity = None  # the tool has answered
        elif kind == "system" and event.get("subtype") == "api_retry":
            attempt, most = event.get("attempt"), event.get("max_retries")
            what = event.get("error_status") or event.get("error") or "error"
            self._activity = f"API retry {attempt}/{most} ({what})"

    def _assistant(self, event: dict[str, Any]) -> None:
        message = mapping(event.get("message"))
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>":
            self.model = model
        if event.get("error") or event.get("is_api_error_message"):
            self.error_code = str(event.get("error") or "")
            self.api_status = whole(event.get("api_error_status"))
            self.api_type = str(event.get("api_error_type") or "")
        texts = []
        for block in blocks(message):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                self._activity = tool_activity(block)
        if texts:
            self.last_text = "\n".join(texts)

    def _tool_errors(self, event: dict[str, Any]) -> None:
        for block in blocks(event.get("message")):
            if block.get("type") == "tool_result" and block.get("is_error"):
                self.tool_errors.append(block_text(block.get("content"))[: self.TOOL_ERROR_CHARS])
        del self.tool_errors[: -self.KEEP_TOOL_ERRORS]

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        result = self.result or {}
        text = result.get("result") if isinstance(result.get("result"), str) else self.last_text
        error = describe_failure(outcome)
        is_error = bool(result.get("is_error"))
        said = string(result.get("result")) or ""  # on is_error, the CLI's own message
        if is_error:
            detail = said or "; ".join(str(item) for item in result.get("errors") or []) or result.get("subtype")
            error = f"Claude Code reported an error: {one_line(str(detail))}"
        elif self.result is None and error is None:
            error = "Claude Code ended without a result event"
        limit = self.usage_limit
        if limit is None and (error is not None or is_error) and not outcome.interrupted:
            limit = limit_in_text(f"{text or ''}\n{outcome.stderr_tail}", self._now, self._local)
        kind = None
        if (error is not None or is_error) and not (outcome.interrupted or outcome.timed_out):
            kind, error = self._classified(result, said if is_error else "", outcome, limit, error)
        counts = token_usage(result.get("usage"))
        return outcome_result(
            outcome,
            text or "",
            error,
            is_error=is_error,
            model=model_used(result) or self.model,
            cost_usd=number(result.get("total_cost_usd")),
            tokens=counts.all if counts else None,
            permission_denials=denials(result.get("permission_denials")),
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            limit_warning=self.limit_warning,
            windows=tuple(self.windows[name] for name in sorted(self.windows)),
            usage=counts,
            num_turns=whole(result.get("num_turns")),
            session_id=self.session_id or None,
            stop_reason=string(result.get("stop_reason")),
            error_kind=kind,
        )

    def _classified(
        self,
        result: dict[str, Any],
        text: str,
        outcome: ProcessOutcome,
        limit: UsageLimit | None,
        error: str | None,
    ) -> tuple[ErrorKind | None, str | None]:
        if limit is not None:
            return ErrorKind.USAGE_LIMIT, error
        status = whole(result.get("api_error_status"))
        facts = Facts(
            text=text,  # only an is_error result's text: otherwise it is the agent's prose
            subtype=string(result.get("subtype")) or "",
            errors=tuple(str(item) for item in result.get("errors") or () if item),
            error_code=self.error_code,
            api_error=string(result.get("api_error")) or "",
            api_status=self.api_status if status is None else status,
            api_type=string(result.get("api_error_type")) or self.api_type,
            stderr=outcome.stderr_tail,
            max_turns=self._max_turns,
        )
        found = classify(facts)
        return (found[0], found[1]) if found else (None, error)


def _merge_limits(known: UsageLimit | None, new: UsageLimit) -> UsageLimit:
    """The exact reset time and window of a `rate_limit_event` win over a later sentence (cut to the
    minute); the sentence, which the CLI wrote for people, becomes the message."""
    if known is None or known.source != "rate_limit_event" or new.source == "rate_limit_event":
        return new
    return replace(known, message=new.message)
