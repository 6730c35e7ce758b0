"""Claude Code (`claude -p --output-format stream-json --verbose`), prompt on stdin.

This is the groundwork: the stream is parsed as it arrives, in one pass, for the final
text and the error state (`is_error` is read even with subtype "success", because API
and auth failures arrive that way). Usage, cost, models and error classes come later.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ralphloop.agents.text import agent_env, describe_failure, limit_in_text, local_zone
from ralphloop.config import Settings
from ralphloop.errors import RalphError
from ralphloop.guards import usage
from ralphloop.protocols import AgentCommand, AgentRequest, AgentResult, ProcessOutcome

# One event line can be a large tool result; beyond this it is skipped, not buffered.
MAX_LINE_BYTES = 16 * 1024 * 1024


class ClaudeAgent:
    """The default agent."""

    name = "claude"

    def __init__(self, settings: Settings, executable: str = "claude") -> None:
        if shutil.which(executable) is None:
            raise RalphError(
                f"{settings.source('agent')}: agent 'claude' needs Claude Code on PATH "
                "(npm install -g @anthropic-ai/claude-code), or choose --agent-cmd CMD or --agent scripted"
            )
        self.executable = executable

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-p", "--output-format", "stream-json", "--verbose")
        if request.model:
            argv += ("--model", request.model)
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> StreamJsonParser:
        return StreamJsonParser(request.started_at)


# Tool errors kept per iteration (the last ones matter for "same error").
_KEEP_TOOL_ERRORS = 20


class StreamJsonParser:
    """Reads stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self, started_at: datetime | None = None) -> None:
        self._partial = bytearray()
        self._skipping = False
        self.result: dict[str, Any] | None = None
        self.last_text = ""
        self.session_id = ""
        self.model: str | None = None
        self.tool_errors: list[str] = []
        self.usage_limit: usage.UsageLimit | None = None
        self.limit_warning: usage.LimitWarning | None = None
        self._now = started_at or datetime.now(UTC)
        self._local = local_zone()

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            self._line(data[start:end])
            start = end + 1
        self._append(data[start:])

    def _append(self, piece: bytes) -> None:
        if self._skipping:
            return
        self._partial += piece
        if len(self._partial) > MAX_LINE_BYTES:
            self._partial.clear()
            self._skipping = True

    def _line(self, piece: bytes) -> None:
        if self._skipping:
            self._skipping = False
            self._partial.clear()
            return
        line = bytes(self._partial) + piece if self._partial else piece
        self._partial.clear()
        try:
            event = json.loads(line)
        except ValueError:
            return
        if isinstance(event, dict):
            self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        if kind in ("rate_limit_event", "assistant", "result"):
            found = usage.from_claude_event(event, self._now, self._local)
            if isinstance(found, usage.UsageLimit):
                self.usage_limit = _merge_limits(self.usage_limit, found)
            elif isinstance(found, usage.LimitWarning):
                self.limit_warning = found
        if kind == "result":
            self.result = event
        elif kind == "assistant":
            message = _mapping(event.get("message"))
            model = message.get("model")
            if isinstance(model, str) and model and model != "<synthetic>":
                self.model = model
            content = message.get("content") or []
            texts = [
                block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"
            ]
            if texts:
                self.last_text = "\n".join(texts)
        elif kind == "user":
            self._tool_errors(event)

    def _tool_errors(self, event: dict[str, Any]) -> None:
        content = _mapping(event.get("message")).get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                self.tool_errors.append(_block_text(block.get("content"))[:2000])
        del self.tool_errors[:-_KEEP_TOOL_ERRORS]

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        if self._partial:
            self._line(b"")
        result = self.result or {}
        text = result.get("result") if isinstance(result.get("result"), str) else self.last_text
        error = describe_failure(outcome)
        if result.get("is_error"):
            detail = text or "; ".join(str(item) for item in result.get("errors") or []) or result.get("subtype")
            error = f"Claude Code reported an error: {detail}"
        elif self.result is None and error is None:
            error = "Claude Code ended without a result event"
        limit = self.usage_limit
        if limit is None and (error is not None or result.get("is_error")):
            limit = limit_in_text(f"{text or ''}\n{outcome.stderr_tail}", self._now, self._local)
        return AgentResult(
            final_text=text or "",
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            failed=error is not None,
            error=error,
            timed_out=outcome.timed_out,
            interrupted=outcome.interrupted,
            is_error=bool(result.get("is_error")),
            model=_model_used(result) or self.model,
            cost_usd=_number(result.get("total_cost_usd")),
            tokens=_tokens(result.get("usage")),
            permission_denials=_denials(result.get("permission_denials")),
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            limit_warning=self.limit_warning,
        )


def _merge_limits(known: usage.UsageLimit | None, new: usage.UsageLimit) -> usage.UsageLimit:
    """The exact reset time and window of a `rate_limit_event` win over a later sentence (cut to the
    minute); the sentence, which the CLI wrote for people, becomes the message."""
    if known is None or known.source != "rate_limit_event" or new.source == "rate_limit_event":
        return new
    return replace(known, message=new.message)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _model_used(result: dict[str, Any]) -> str | None:
    """The model that did most of the work: of `modelUsage`, the one with the most output tokens."""
    usage_by_model = result.get("modelUsage")
    if not isinstance(usage_by_model, dict) or not usage_by_model:
        return None
    ranked = sorted(
        (name for name in usage_by_model if isinstance(name, str) and name != "<synthetic>"),
        key=lambda name: (
            -(_number((usage_by_model[name] or {}).get("outputTokens")) or 0)
            if isinstance(usage_by_model[name], dict)
            else 0
        ),
    )
    return ranked[0] if ranked else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _tokens(value: Any) -> int | None:
    if not isinstance(value, dict):
        return None
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    counts = [value.get(key) for key in keys]
    numbers = [int(count) for count in counts if isinstance(count, int) and not isinstance(count, bool)]
    return sum(numbers) if numbers else None


def _denials(value: Any) -> tuple[str, ...]:
    """`permission_denials` as "Tool(command)" lines, the way --allowedTools spells them."""
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if not isinstance(item, dict):
            continue
        tool = str(item.get("tool_name") or "tool")
        given = _mapping(item.get("tool_input"))
        detail = given.get("command") or given.get("file_path") or given.get("path") or ""
        names.append(f"{tool}({str(detail)[:120]})" if detail else tool)
    return tuple(dict.fromkeys(names))
