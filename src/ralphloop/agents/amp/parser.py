"""Reading `amp -x --stream-json` as it arrives, in one pass: the thread id, the mode, the final text, the tokens of
every assistant message, tool errors, the CLI's error, and the tool being used now (live view).

Amp 0.0.1790142911 writes (its shipped source, `--stream-json`): `system`/`init` {cwd, session_id (the thread id),
tools, mcp_servers, agent_mode}; `assistant` {message {content, stop_reason, usage {input_tokens,
cache_creation_input_tokens, cache_read_input_tokens, output_tokens}}} once per message; `user` {message {content
[tool_result {tool_use_id, content, is_error}]}}; and one `result`: `success` {result, num_turns, duration_ms} or
`error_during_execution` {is_error: true, error}. **A failed thread still exits 0**, so the `result` decides; no
`result` at all is a failure too. No event names a model (the mode stands for it) or a cost (Amp bills in
credits, which the stream does not carry). Free of the backend's settings, so `ralph analyze` reads a saved log.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ralphloop.agents.amp.activity import tool_activity
from ralphloop.agents.amp.errors import approvals_refused, classify, free_tier_limit, stderr_error
from ralphloop.agents.fields import block_text, blocks, mapping, text, whole
from ralphloop.agents.json_lines import JsonLinesParser, json_object
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage
from ralphloop.words.textsafe import one_line

# Above this, a `user` line (a tool's output) is skimmed, not parsed: json.loads costs several times a line's size.
SKIM_BYTES = 1024 * 1024
_USER = re.compile(rb'"type"\s*:\s*"user"')
_MAX_RESULT_JSON = 256 * 1024  # a longer tool result is not read for its exit code
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class AmpStreamParser(JsonLinesParser):
    """Reads Amp's stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self, started_at: datetime | None = None) -> None:
        super().__init__()
        self._now = started_at or datetime.now(UTC)
        self.session_id = ""
        self.mode: str | None = None
        self.result: dict[str, Any] | None = None
        self.last_text = ""  # the last assistant message's text: the final text when no result came
        self.usage: TokenUsage | None = None
        self.messages = 0
        self.stop_reason: str | None = None
        self._doing: dict[str, str] = {}  # tool_use id → its activity, until its result comes

    def activity(self) -> str | None:
        return next(reversed(self._doing.values()), None) if self._doing else None

    def _line(self, line: bytes | bytearray) -> None:
        if len(line) > SKIM_BYTES and _USER.search(bytes(line[:512])) and b'"is_error":true' not in line:
            self._doing.clear()  # a tool answered; its (successful) output is not needed
            return
        super()._line(line)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        message = mapping(event.get("message"))
        if kind == "system" and event.get("subtype") == "init":
            mode = event.get("agent_mode")
            self.mode = mode if isinstance(mode, str) and mode else self.mode
        elif kind == "assistant":
            self._assistant(message)
        elif kind == "user":
            self._user(message)
        elif kind == "result":
            self.result = event
            self._doing.clear()

    def _assistant(self, message: dict[str, Any]) -> None:
        self.messages += 1
        counted = _tokens(message.get("usage"))
        if counted is not None:  # each message's own inference: they add up
            self.usage = counted if self.usage is None else self.usage + counted
        if isinstance(message.get("stop_reason"), str):
            self.stop_reason = message["stop_reason"]
        texts = []
        for block in blocks(message):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                ident = str(block.get("id") or "")
                self._doing.pop(ident, None)
                self._doing[ident] = tool_activity(block)
        if texts:
            self.last_text = "\n".join(texts)

    def _user(self, message: dict[str, Any]) -> None:
        for block in blocks(message):
            if block.get("type") != "tool_result":
                continue
            self._doing.pop(str(block.get("tool_use_id") or ""), None)
            failure = tool_failure(block)
            if failure is not None:
                self._tool_error(failure)

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        result = self.result or {}
        is_error = result.get("is_error") is True
        said = text(result.get("error")) if is_error else ""
        final = text(result.get("result")) if self.result is not None and not is_error else self.last_text
        error = describe_failure(outcome)
        if is_error:
            error = f"Amp reported an error: {one_line(said or text(result.get('subtype')) or 'error', 300)}"
        elif self.result is None and error is None:
            error = "Amp ended without a result event"
        kind: ErrorKind | None = None
        limit: UsageLimit | None = None
        stopped = ralph_stopped(outcome)
        if error is not None and not stopped:
            # The CLI's structured error first; its own stderr line second (what it printed before a thread began).
            cli_said = said or stderr_error(outcome.stderr_tail)
            found = classify(cli_said)
            if found is not None and found[0] is ErrorKind.USAGE_LIMIT:
                kind, limit = ErrorKind.USAGE_LIMIT, free_tier_limit(cli_said, self._now)
            elif found is not None:
                kind, error = found
            elif denied := approvals_refused(said or outcome.stderr_tail):
                error = (
                    f"{error}. Amp's stream-json mode cannot ask for approval: allow {', '.join(denied)} in Amp's "
                    "amp.permissions, or run with --permissions all (--dangerously-allow-all)"
                )
        return outcome_result(
            outcome,
            final,
            error,
            is_error=is_error,
            model=self.mode,
            tokens=self.usage.all if self.usage else None,
            permission_denials=approvals_refused(said or outcome.stderr_tail) if error is not None else (),
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            usage=self.usage,
            num_turns=whole(result.get("num_turns")) or self.messages or None,
            session_id=self.session_id or None,
            stop_reason=self.stop_reason,
            error_kind=kind,
        )


def tool_failure(block: dict[str, Any]) -> str | None:
    """What a tool result says went wrong (its last 2000 characters): a result Amp marks `is_error` (the tool
    failed, was cancelled or refused), or a shell command's non-zero `exitCode`, which Amp reports as a success
    whose content is the JSON {"output", "exitCode"}; None for a tool that worked."""
    content = block_text(block.get("content"))
    if block.get("is_error") is True:
        return content[-2000:]
    if not content.startswith("{") or len(content) > _MAX_RESULT_JSON:
        return None
    found = json_object(content)
    code = found.get("exitCode") if found else None
    if not isinstance(code, int) or isinstance(code, bool) or code == 0:
        return None
    output = found.get("output") if found else None
    return (output if isinstance(output, str) and output.strip() else f"exit {code}")[-2000:]


def _tokens(value: Any) -> TokenUsage | None:
    """An assistant message's `usage`, Anthropic's four kinds (Amp leaves a cache field out when it is unknown)."""
    if not isinstance(value, dict):
        return None
    counts = {key: whole(value.get(key)) for key in _USAGE_KEYS}
    if all(count is None for count in counts.values()):
        return None
    return TokenUsage(*(max(0, counts[key] or 0) for key in _USAGE_KEYS))
