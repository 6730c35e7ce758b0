"""Claude Code (`claude -p --output-format stream-json --verbose`), prompt on stdin.

The stream is parsed as it arrives, in one pass, keeping only what the result needs:
the session id, the model that answered, the final text, usage and cost, permission
denials, tool errors, usage limits, and what the agent is doing now (for the live view).
`is_error` is read even with subtype "success", because API and auth failures arrive that way;
claude_errors.py then says which kind of failure it was and what to do about it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ralphloop.agents.claude_errors import Facts, classify
from ralphloop.agents.claude_stream import block_text, mapping, tool_activity
from ralphloop.agents.text import agent_env, describe_failure, limit_in_text, local_zone
from ralphloop.config import Settings
from ralphloop.errors import RalphError
from ralphloop.guards import usage
from ralphloop.protocols import (
    AgentCommand,
    AgentRequest,
    AgentResult,
    ErrorKind,
    ProcessOutcome,
    TokenUsage,
)
from ralphloop.textsafe import one_line

# One event line can be a large tool result; beyond this it is skipped, not buffered.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Above this, a tool event is skimmed (see StreamJsonParser._skimmed), not parsed.
SKIM_BYTES = 1024 * 1024
_USER = re.compile(rb'"type"\s*:\s*"user"')
_ASSISTANT = re.compile(rb'"type"\s*:\s*"assistant"')
_TOOL_NAME = re.compile(rb'"type"\s*:\s*"tool_use"\s*,\s*"id"\s*:\s*"[^"]*"\s*,\s*"name"\s*:\s*"([^"]{1,100})"')


class ClaudeAgent:
    """The default agent."""

    name = "claude"

    def __init__(self, settings: Settings, executable: str | None = None) -> None:
        chosen = executable or settings.claude_command or "claude"
        if shutil.which(chosen) is None:
            if settings.claude_command and executable is None:
                raise RalphError(
                    f"{settings.source('claude_command')}: {chosen!r} is not an executable on PATH or a path to one"
                )
            raise RalphError(
                f"{settings.source('agent')}: agent 'claude' needs Claude Code on PATH "
                "(npm install -g @anthropic-ai/claude-code), or claude.command in .ralph/config.yaml; "
                "or choose --agent-cmd CMD or --agent scripted"
            )
        if settings.skip_permissions and _is_root() and not os.environ.get("IS_SANDBOX"):
            raise RalphError(
                f"{settings.source('skip_permissions')}: Claude Code refuses --dangerously-skip-permissions when "
                "run as root. Run ralph as a normal user, or, only inside a throwaway container or VM, "
                "set IS_SANDBOX=1; or leave the flag out and allow tools with claude.allowed_tools"
            )
        self.executable = chosen
        self.skip_permissions = settings.skip_permissions
        self.allowed_tools = settings.allowed_tools
        self.max_turns = settings.max_turns
        self.append_system_prompt = settings.append_system_prompt
        self.resume = settings.resume

    def command(self, request: AgentRequest) -> AgentCommand:
        argv: tuple[str, ...] = (self.executable, "-p", "--output-format", "stream-json", "--verbose")
        if request.model:
            argv += ("--model", request.model)
        if self.skip_permissions:
            argv += ("--dangerously-skip-permissions",)  # only ever because the user asked for it
        if self.allowed_tools:
            argv += ("--allowedTools", ",".join(self.allowed_tools))
        if self.max_turns:
            argv += ("--max-turns", str(self.max_turns))
        if self.append_system_prompt:
            argv += ("--append-system-prompt", self.append_system_prompt)
        if self.resume and request.resume_session:
            argv += ("--resume", request.resume_session)
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> StreamJsonParser:
        return StreamJsonParser(request.started_at, max_turns=self.max_turns)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


# Tool errors kept per iteration (the last ones matter for "same error").
_KEEP_TOOL_ERRORS = 20


class StreamJsonParser:
    """Reads stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self, started_at: datetime | None = None, *, max_turns: int | None = None) -> None:
        self._partial = bytearray()
        self._skipping = False
        self.result: dict[str, Any] | None = None
        self.last_text = ""
        self.session_id = ""
        self.model: str | None = None
        self.tool_errors: list[str] = []
        self.usage_limit: usage.UsageLimit | None = None
        self.limit_warning: usage.LimitWarning | None = None
        self.error_code = ""  # the last synthetic assistant event's `error`
        self.api_status: int | None = None
        self.api_type = ""
        self._activity: str | None = None
        self._max_turns = max_turns
        self._now = started_at or datetime.now(UTC)
        self._local = local_zone()

    def activity(self) -> str | None:
        return self._activity

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
        if self._partial:  # the line's start came in earlier chunks: complete it in place, never copy it
            self._partial += piece
            line: bytes | bytearray = self._partial
        else:
            line = piece
        if len(line) > SKIM_BYTES and self._skimmed(line):
            self._partial.clear()
            return
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            event = None
        finally:
            self._partial.clear()
        if isinstance(event, dict):
            self._event(event)

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
            found = usage.from_claude_event(event, self._now, self._local)
            if isinstance(found, usage.UsageLimit):
                self.usage_limit = _merge_limits(self.usage_limit, found)
            elif isinstance(found, usage.LimitWarning):
                self.limit_warning = found
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
            status = event.get("api_error_status")
            self.api_status = status if isinstance(status, int) and not isinstance(status, bool) else None
            self.api_type = str(event.get("api_error_type") or "")
        content = message.get("content") or []
        texts = []
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                self._activity = tool_activity(block)
        if texts:
            self.last_text = "\n".join(texts)

    def _tool_errors(self, event: dict[str, Any]) -> None:
        content = mapping(event.get("message")).get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                self.tool_errors.append(block_text(block.get("content"))[:2000])
        del self.tool_errors[:-_KEEP_TOOL_ERRORS]

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        if self._partial:
            self._line(b"")
        result = self.result or {}
        text = result.get("result") if isinstance(result.get("result"), str) else self.last_text
        error = describe_failure(outcome)
        is_error = bool(result.get("is_error"))
        said = _string(result.get("result")) or ""  # on is_error, the CLI's own message
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
        counts = _usage(result.get("usage"))
        return AgentResult(
            final_text=text or "",
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            failed=error is not None,
            error=error,
            timed_out=outcome.timed_out,
            interrupted=outcome.interrupted,
            is_error=is_error,
            model=_model_used(result) or self.model,
            cost_usd=_number(result.get("total_cost_usd")),
            tokens=counts.all if counts else None,
            permission_denials=_denials(result.get("permission_denials")),
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            limit_warning=self.limit_warning,
            usage=counts,
            num_turns=_whole(result.get("num_turns")),
            session_id=self.session_id or None,
            stop_reason=_string(result.get("stop_reason")),
            error_kind=kind,
        )

    def _classified(
        self,
        result: dict[str, Any],
        text: str,
        outcome: ProcessOutcome,
        limit: usage.UsageLimit | None,
        error: str | None,
    ) -> tuple[ErrorKind | None, str | None]:
        if limit is not None:
            return ErrorKind.USAGE_LIMIT, error
        status = result.get("api_error_status")
        facts = Facts(
            text=text,  # only an is_error result's text: otherwise it is the agent's prose
            subtype=_string(result.get("subtype")) or "",
            errors=tuple(str(item) for item in result.get("errors") or () if item),
            error_code=self.error_code,
            api_error=_string(result.get("api_error")) or "",
            api_status=status if isinstance(status, int) and not isinstance(status, bool) else self.api_status,
            api_type=_string(result.get("api_error_type")) or self.api_type,
            stderr=outcome.stderr_tail,
            max_turns=self._max_turns,
        )
        found = classify(facts)
        return (found[0], found[1]) if found else (None, error)


def _merge_limits(known: usage.UsageLimit | None, new: usage.UsageLimit) -> usage.UsageLimit:
    """The exact reset time and window of a `rate_limit_event` win over a later sentence (cut to the
    minute); the sentence, which the CLI wrote for people, becomes the message."""
    if known is None or known.source != "rate_limit_event" or new.source == "rate_limit_event":
        return new
    return replace(known, message=new.message)


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


def _whole(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _usage(value: Any) -> TokenUsage | None:
    """The result's `usage` (every turn of the run summed), or None when it has no counts at all."""
    if not isinstance(value, dict):
        return None
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    counts = [_whole(value.get(key)) for key in keys]
    if all(count is None for count in counts):
        return None
    return TokenUsage(*(max(0, count or 0) for count in counts))


def _denials(value: Any) -> tuple[str, ...]:
    """`permission_denials` as "Tool(command)" lines, the way --allowedTools spells them."""
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if not isinstance(item, dict):
            continue
        tool = str(item.get("tool_name") or "tool")
        given = mapping(item.get("tool_input"))
        detail = given.get("command") or given.get("file_path") or given.get("path") or ""
        names.append(f"{tool}({str(detail)[:120]})" if detail else tool)
    return tuple(dict.fromkeys(names))
