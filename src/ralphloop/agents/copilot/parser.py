"""Reading `copilot --output-format json` as it arrives, in one pass: the final answer (the main agent's last
`assistant.message` with text), the model, the tool running now (live view), refused and failed tools, the CLI's
error events, and its closing `result` event (session id, exit code).

A failure is a terminal `session.error`, a `result` with a non-zero `exitCode`, a non-zero exit, or a run that
ends without its `result` event. Its kind comes from the error event (errors.py), else from Copilot's own
`Error: …` lines on stderr. Tokens, the model it ended on and the charge come from the usage file Copilot writes
at its exit (usage_file.py), when ralph asked for one; the stream itself carries none.
Free of the backend's settings, so `ralph analyze` reads a saved log without loading the run's configuration.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ralphloop.agents.copilot import usage_file
from ralphloop.agents.copilot.activity import tool_activity
from ralphloop.agents.copilot.errors import CopilotError, Verdict, classify
from ralphloop.agents.fields import text, whole
from ralphloop.agents.json_lines import JsonLinesParser, typed
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome
from ralphloop.words.textsafe import one_line

_KEEP = 20  # refusals kept (the "same error" fingerprint needs the last few), and tools in progress
_NOT_TERMINAL = ("model_call", "hook")  # session.error types the CLI itself does not fail on
_BLOCKING_WARNINGS = ("policy_blocked", "compaction_static_context_blocked")


class CopilotJsonParser(JsonLinesParser):
    """Reads Copilot's JSON events line by line as they arrive; keeps only what the result needs."""

    def __init__(
        self, started_at: datetime | None = None, *, model: str | None = None, usage_path: str | None = None
    ) -> None:
        super().__init__()
        self._now = started_at or datetime.now(UTC)
        self._asked_model = model
        self._usage_path = usage_path  # None: no usage file (a saved log)
        self.session_id = ""
        self.final_text = ""
        self.model = ""
        self.turns = 0
        self.error: CopilotError | None = None  # the last terminal error event
        self.result: dict[str, Any] | None = None
        self.retrying = ""  # the last "Retrying..." notice: what a run that never ended was waiting for
        self.denials: list[str] = []
        self._code = ""  # the last failed model call's service code (a custom provider's session.error has none)
        self._tools: dict[str, str] = {}  # tool call id → its activity, while it runs

    def activity(self) -> str | None:
        return next(reversed(self._tools.values()), None) if self._tools else None

    def _wanted(self, event: dict[str, Any]) -> bool:
        return typed(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "result":
            self.result = event
            if isinstance(event.get("sessionId"), str):
                self.session_id = event["sessionId"]
            self._tools.clear()
            return
        data = event.get("data")
        if not isinstance(data, dict) or "agentId" in event or data.get("parentToolCallId"):
            return  # a sub-agent's event: its words and tools are not the run's answer
        if kind == "assistant.message":
            self._message(data)
        elif kind == "assistant.turn_start":
            self.turns += 1
        elif kind == "tool.execution_start":
            ident = str(data.get("toolCallId") or "")
            self._tools.pop(ident, None)
            self._tools[ident] = tool_activity(data.get("toolName"), data.get("arguments"))
            if len(self._tools) > _KEEP:  # tools started and never finished (a flood): only the newest matter
                del self._tools[next(iter(self._tools))]
        elif kind == "tool.execution_complete":
            self._completed(data)
        elif kind in ("session.tools_updated", "model.call_start") and text(data.get("model")):
            self.model = self.model or data["model"]
        elif kind == "model.call_failure":
            self._code = text(data.get("errorCode")) or self._code
        elif kind == "session.error" and data.get("errorType") not in _NOT_TERMINAL:
            self.error = CopilotError(
                message=text(data.get("message")) or "session.error",
                error_type=text(data.get("errorType")),
                code=text(data.get("errorCode")) or self._code,
                status=whole(data.get("statusCode")),
            )
        elif kind == "session.warning" and data.get("warningType") in _BLOCKING_WARNINGS:
            self.error = CopilotError(text(data.get("message")) or str(data["warningType"]), error_type="policy")
        elif kind == "session.info" and data.get("infoType") == "model_retry":
            self.retrying = text(data.get("message"))

    def _message(self, data: dict[str, Any]) -> None:
        if text(data.get("model")):
            self.model = data["model"]
        content = data.get("content")
        if isinstance(content, str) and content.strip():
            self.final_text = content

    def _completed(self, data: dict[str, Any]) -> None:
        doing = self._tools.pop(str(data.get("toolCallId") or ""), None)
        found = data.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        if data.get("success") is False:
            if error.get("code") == "denied":
                self.denials.append(doing or "tool")
                del self.denials[:-_KEEP]
            else:
                self._tool_error(text(error.get("message")) or f"{doing or 'tool'} failed")
            return
        shell = data.get("shellExecution")
        code = shell.get("exitCode") if isinstance(shell, dict) else None
        if isinstance(code, int) and code != 0:
            result = data.get("result")
            output = result.get("content") if isinstance(result, dict) else None
            self._tool_error(output if isinstance(output, str) and output.strip() else f"exit {code}")

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        error = describe_failure(outcome)
        stopped = ralph_stopped(outcome)
        reported = self.error or (None if stopped else _stderr_error(outcome.stderr_tail))
        code = whole(self.result.get("exitCode")) if self.result is not None else None
        if stopped:
            pass  # ralph stopped it (or never started it): that is the story, whatever it printed before
        elif self.error is not None:
            error = f"Copilot reported an error: {one_line(self.error.message, 300)}"
        elif error is None and self.result is None:
            error = "Copilot ended without its result event (the run did not finish)"
        elif error is None and code is not None and code != 0:
            error = f"Copilot reported exit code {code}"
        elif error is None and self.result is not None and self.result.get("outcome") == "blocked":
            error = f"Copilot stopped blocked: {one_line(str(self.result.get('blocker') or ''), 200)}"
        if error is not None and self.retrying and self.result is None and self.error is None:
            error = f"{error}; Copilot was retrying: {one_line(self.retrying, 200)}"
        verdict: Verdict | None = None
        if error is not None and not stopped and reported is not None:
            verdict = classify(reported, self._now)
            if verdict is not None and verdict.kind is not ErrorKind.USAGE_LIMIT:
                error = verdict.message
        facts = usage_file.read(self._usage_path)
        return outcome_result(
            outcome,
            self.final_text,
            error,
            is_error=self.error is not None or bool(code),
            model=self.model or facts.model or self._asked_model,
            cost_usd=facts.cost_usd,
            tokens=facts.usage.all if facts.usage else None,
            permission_denials=tuple(self.denials),
            tool_errors=tuple(self.tool_errors),
            usage_limit=verdict.limit if verdict is not None else None,
            usage=facts.usage,
            num_turns=self.turns or None,
            session_id=self.session_id or None,
            error_kind=verdict.kind if verdict is not None else None,
        )


def _stderr_error(tail: str) -> CopilotError | None:
    """Copilot's own last `Error: …` line on stderr (it fails there before any event: no login, a bad flag)."""
    lines = [line.strip() for line in tail.splitlines() if line.strip().startswith("Error:")]
    if not lines:
        return None
    said = lines[-1].removeprefix("Error:").strip()
    # "Authentication token found but could not be validated." is followed by its reason on a later line.
    detail = next((line.strip() for line in tail.splitlines() if "fetch failed" in line), "")
    return CopilotError(f"{said} {detail}".strip())
