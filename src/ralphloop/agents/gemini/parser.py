"""Reading `gemini -p --output-format stream-json` as it arrives, in one pass: the session id, the model's text
after its last tool call (the final text), the tool in use (live view), the tools refused or failed, and the
`result` event that ends every run (its status, error and token stats).

A failure is a `result` with status "error" (whatever the exit code: an empty or blocked answer ends with exit 0),
a non-zero exit, or a run that ends without a `result`. Its kind comes from the CLI's own error message and exit
code (errors.py), after a quota error is looked for in it (quota.py). Tokens and the model come from
`result.stats` (stats.py), the cost from prices.py. Free of the backend's settings, so `ralph analyze` reads a
saved log without loading the run's configuration.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ralphloop.agents.gemini import session_file, stats
from ralphloop.agents.gemini.activity import tool_activity, tool_detail
from ralphloop.agents.gemini.errors import classify, http_status
from ralphloop.agents.gemini.prices import cost_usd, needs_requests
from ralphloop.agents.gemini.quota import stated_at, usage_limit
from ralphloop.agents.json_lines import JsonLinesParser
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage
from ralphloop.words.textsafe import one_line, strip_terminal_controls

_KEEP_TEXT = 1024 * 1024  # of the final text, its last MiB: a flooding model cannot fill ralph's memory
_KEEP_DENIALS = 20
# The tools Gemini's approval modes keep from a non-interactive run (its policies/write.toml): a call to one of
# them under `default` or `auto_edit` comes back "Tool … not found" (tool_not_registered), a refusal.
_GATED_TOOLS = frozenset({"run_shell_command", "write_file", "replace", "web_fetch", "activate_skill"})
_DENIED_TYPES = frozenset({"policy_violation", "permission_denied"})
_EXIT_CODE_LINE = "Command exited with code: "
# The CLI's stderr besides its errors: start-up notes, stack frames and the braces of a printed error object.
_NOISE = (
    *("Warning:", "Ripgrep is not available", "[STARTUP]", "YOLO mode is enabled", "[Routing]", "(node:", "(Use `node"),
    *("at ", "{", "}"),
)
_ATTEMPT = re.compile(r"Attempt \d+ failed")


class GeminiStreamParser(JsonLinesParser):
    """Reads Gemini stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(
        self, started_at: datetime | None = None, *, model: str | None = None, gemini_home: Path | None = None
    ) -> None:
        super().__init__()
        self._now = started_at or datetime.now(UTC)
        self._asked_model = model
        self._home = gemini_home  # the CLI's config folder; None: its session file is not read (a saved log)
        self.session_id = ""
        self.final_text = ""
        self.result: dict[str, Any] | None = None
        self.stated = ""  # the last `error` event of severity "error": the CLI's reason when its result gives none
        self.denials: list[str] = []
        self._calls: dict[str, tuple[str, str, str]] = {}  # tool id → (name, activity, detail), while it runs

    def activity(self) -> str | None:
        return next(reversed(self._calls.values()))[1] if self._calls else None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "init" and isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"][:200]
        elif kind == "message" and event.get("role") == "assistant" and isinstance(event.get("content"), str):
            # Text said before a tool call is narration: the final text is what follows the last one.
            self.final_text = (self.final_text + event["content"])[-_KEEP_TEXT:]
        elif kind == "tool_use":
            self.final_text = ""
            ident = str(event.get("tool_id") or "")[:200]
            name = str(event.get("tool_name") or "tool")
            self._calls.pop(ident, None)
            parameters = event.get("parameters")
            self._calls[ident] = (one_line(name, 100), tool_activity(name, parameters), tool_detail(parameters))
            _forget_oldest(self._calls, 100)
        elif kind == "tool_result":
            self.final_text = ""
            self._tool_result(event)
        elif kind == "error" and event.get("severity") == "error" and isinstance(event.get("message"), str):
            self.stated = strip_terminal_controls(event["message"][:4000])
        elif kind == "result":
            self.result = event
            self._calls.clear()

    def _tool_result(self, event: dict[str, Any]) -> None:
        name, _, detail = self._calls.pop(str(event.get("tool_id") or "")[:200], ("tool", "tool", ""))
        error: dict[str, Any] = event["error"] if isinstance(event.get("error"), dict) else {}
        output: str = event["output"] if isinstance(event.get("output"), str) else ""
        if event.get("status") == "error":
            kind = str(error.get("type") or "")
            if kind in _DENIED_TYPES or (kind == "tool_not_registered" and name in _GATED_TOOLS):
                self.denials = [*self.denials[-(_KEEP_DENIALS - 1) :], f"{name}({detail})" if detail else name]
                return
            said = error.get("message") if isinstance(error.get("message"), str) else output
            self._tool_error(str(said or kind or "tool error"))
        elif name == "run_shell_command" and _failed_command(output):
            self._tool_error(output)

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        result = self.result or {}
        error = describe_failure(outcome)
        said = _said(result) or (self.stated if result.get("status") == "error" else "")
        if result.get("status") == "error":
            error = f"Gemini reported an error: {one_line(said or 'result status error', 300)}"
        elif self.result is None and error is None:
            error = "Gemini ended without a result event"
        elif self.result is None and outcome.timed_out and _retrying(outcome.stderr_tail):
            error = f"{error}; Gemini was retrying: {one_line(_retrying(outcome.stderr_tail), 200)}"
        per_model = stats.per_model(result.get("stats"))
        usage = stats.total(per_model)
        limit: UsageLimit | None = None
        kind: ErrorKind | None = None
        stopped = ralph_stopped(outcome)
        if error is not None and not stopped:
            # The CLI's own words: its result's error, else, when it failed before its session began, its stderr's
            # last message. Once a session ran, stderr also carries tool output (the CLI logs failed tools
            # there): then only the exit code speaks.
            began = self.result is not None or bool(self.session_id)
            words = said or ("" if began else _stderr_said(outcome.stderr_tail))
            end = self._now + timedelta(seconds=max(0.0, outcome.duration_s))
            limit = usage_limit(words, http_status(words, outcome.exit_code), stated_at(result.get("timestamp"), end))
            if limit is not None:
                kind = ErrorKind.USAGE_LIMIT
            else:
                found = classify(words, outcome.exit_code)
                if found is not None:
                    kind, error = found
        model = stats.main_model(per_model, self._asked_model) or self._asked_model
        return outcome_result(
            outcome,
            self.final_text,
            error,
            is_error=result.get("status") == "error",
            model=model,
            cost_usd=self._cost(per_model) if usage is not None else None,
            tokens=usage.all if usage else None,
            permission_denials=tuple(self.denials),
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            usage=usage,
            session_id=self.session_id or None,
            error_kind=kind,
        )

    def _cost(self, per_model: dict[str, TokenUsage]) -> float | None:
        on = self._now.date()
        if not needs_requests(per_model, on) or self._home is None:
            return cost_usd(per_model, on)
        path = session_file.find(self._home, self.session_id)
        return cost_usd(per_model, on, session_file.requests(path) if path is not None else {})


def _said(result: dict[str, Any]) -> str:
    """The `result` event's error message (the CLI's own words), "" when there is none."""
    error = result.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return strip_terminal_controls(message[:4000]) if isinstance(message, str) else ""


def _stderr_said(tail: str) -> str:
    """The last line of the CLI's stderr that states something: not a start-up note or a stack frame."""
    for line in reversed(strip_terminal_controls(tail).splitlines()):
        text = line.strip()
        if text and not text.startswith(_NOISE):
            return text
    return ""


def _retrying(tail: str) -> str:
    """The CLI's last "Attempt N failed …" line: what a run stopped while it retried was waiting for."""
    return next((line.strip() for line in reversed(tail.splitlines()) if _ATTEMPT.match(line.strip())), "")


def _failed_command(output: str) -> bool:
    """Whether a shell tool's display ends on "Command exited with code: N" with N other than 0."""
    at = output.rfind(_EXIT_CODE_LINE)
    if at < 0:
        return False
    code = output[at + len(_EXIT_CODE_LINE) :].split()[:1]
    return bool(code) and code[0] != "0"


def _forget_oldest(calls: dict[str, Any], keep: int) -> None:
    """Forget the oldest calls past `keep`: a stream of tool_use events without results cannot grow memory."""
    while len(calls) > keep:
        del calls[next(iter(calls))]
