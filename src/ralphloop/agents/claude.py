"""Claude Code (`claude -p --output-format stream-json --verbose`), prompt on stdin.

This is the groundwork: the stream is parsed as it arrives, in one pass, for the final
text and the error state (`is_error` is read even with subtype "success", because API
and auth failures arrive that way). Usage, cost, models and error classes come later.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

from ralphloop.agents.text import agent_env, describe_failure
from ralphloop.config import Settings
from ralphloop.errors import RalphError
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
        argv = (self.executable, "-p", "--output-format", "stream-json", "--verbose")
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> StreamJsonParser:
        return StreamJsonParser()


class StreamJsonParser:
    """Reads stream-json events line by line as they arrive; keeps only what the result needs."""

    def __init__(self) -> None:
        self._partial = bytearray()
        self._skipping = False
        self.result: dict[str, Any] | None = None
        self.last_text = ""
        self.session_id = ""

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
        if kind == "result":
            self.result = event
        elif kind == "assistant":
            content = (event.get("message") or {}).get("content") or []
            texts = [
                block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"
            ]
            if texts:
                self.last_text = "\n".join(texts)

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
        return AgentResult(
            final_text=text or "",
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            failed=error is not None,
            error=error,
            timed_out=outcome.timed_out,
            interrupted=outcome.interrupted,
        )
