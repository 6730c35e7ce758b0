"""Reading `cursor-agent -p --output-format stream-json` as it arrives, in one pass: the session id, the model's
name, the final text, the duration Cursor measured, tool errors, and the tool being used now (live view).

Built from Cursor's documentation (cursor.com/docs/cli/reference/output-format), not from a captured run: no
installable Cursor CLI was at hand. The stream ends with one `result` {subtype: success, is_error, duration_ms,
result (the whole assistant text), session_id} on success; on failure Cursor exits non-zero, may stop without a
`result`, and writes its error to stderr (errors.py reads it). It reports **no tokens and no cost**; its `init`
names the model by its display name ("Claude 4 Sonnet"), which is not the id `--model` takes. Free of the
backend's settings, so `ralph analyze` reads a saved log without loading the run's configuration.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.cursor.activity import tool_activity, tool_failure
from ralphloop.agents.cursor.errors import classify
from ralphloop.agents.fields import blocks
from ralphloop.agents.json_lines import JsonLinesParser
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome
from ralphloop.words.textsafe import one_line


class CursorStreamParser(JsonLinesParser):
    """Reads Cursor's stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self, *, model: str | None = None) -> None:
        super().__init__()
        self._asked_model = model
        self.session_id = ""
        self.model_name: str | None = None  # the init event's display name
        self.result: dict[str, Any] | None = None
        self.texts: list[str] = []  # the assistant messages' text, for a run that ends without a result
        self.tool_calls = 0
        self._doing: dict[str, str] = {}  # call_id → its activity, until it completes

    def activity(self) -> str | None:
        return next(reversed(self._doing.values()), None) if self._doing else None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        if kind == "system" and event.get("subtype") == "init":
            model = event.get("model")
            self.model_name = model if isinstance(model, str) and model else self.model_name
        elif kind == "assistant":
            for block in blocks(event.get("message")):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.texts.append(block["text"])
            del self.texts[:-50]
        elif kind == "tool_call":
            self._tool_call(event)
        elif kind == "result":
            self.result = event
            self._doing.clear()

    def _tool_call(self, event: dict[str, Any]) -> None:
        ident = str(event.get("call_id") or "")
        if event.get("subtype") == "started":
            self.tool_calls += 1
            self._doing.pop(ident, None)
            self._doing[ident] = tool_activity(event.get("tool_call"))
        elif event.get("subtype") == "completed":
            self._doing.pop(ident, None)
            failure = tool_failure(event.get("tool_call"))
            if failure:
                self._tool_error(failure)

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        result = self.result or {}
        is_error = result.get("is_error") is True
        text = result.get("result") if isinstance(result.get("result"), str) else "".join(self.texts)
        error = describe_failure(outcome)
        if is_error:
            error = f"Cursor reported an error: {one_line(str(text or result.get('subtype') or 'error'), 300)}"
        elif self.result is None and error is None:
            error = "cursor-agent ended without a result event"
        kind: ErrorKind | None = None
        if error is not None and not ralph_stopped(outcome):
            found = classify(outcome.stderr_tail)
            if found is not None:
                kind, error = found
        return outcome_result(
            outcome,
            text or "",
            error,
            is_error=is_error,
            # The display name cannot be compared with the id asked for: the id Cursor accepted stands for it.
            model=self._asked_model or self.model_name,
            tool_errors=tuple(self.tool_errors),
            session_id=self.session_id or None,
            error_kind=kind,
        )
