"""Reading `codex exec --json` as it arrives, in one pass: the thread id, the last `agent_message` (the final
text), the token counts of `turn.completed`, the CLI's error messages, and the item being worked on (live view).

A failure is a `turn.failed`, a non-zero exit, or a run that ends without finishing its turn. Its kind comes from
the CLI's last error message (errors.py), after a usage-limit sentence is looked for in it (agents/limit_text.py;
Codex prints the reset in its local time, and ralph runs it with TZ=UTC). A turn none of whose commands its sandbox
could start (bwrap without namespaces: sandbox.py) fails too, though Codex finishes it as if all went well.
The stream names no model and no cost: the model is the session file's (session_file.py) or the one ralph asked
for; the cost comes from prices.py.
Free of the backend's settings, so `ralph analyze` reads a saved log without loading the run's configuration.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ralphloop.agents.codex import session_file
from ralphloop.agents.codex.activity import item_activity
from ralphloop.agents.codex.errors import classify
from ralphloop.agents.codex.prices import cost_usd
from ralphloop.agents.codex.sandbox import bwrap_failure, refused
from ralphloop.agents.fields import whole
from ralphloop.agents.json_lines import JsonLinesParser
from ralphloop.agents.limit_text import from_text
from ralphloop.agents.text import describe_failure, outcome_result, ralph_stopped
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage
from ralphloop.words.textsafe import one_line

_RETRYING = "Reconnecting..."


class CodexJsonParser(JsonLinesParser):
    """Reads `codex exec --json` events line by line as they arrive; keeps only what the result needs."""

    def __init__(
        self, started_at: datetime | None = None, *, model: str | None = None, codex_home: Path | None = None
    ) -> None:
        super().__init__()
        self._now = started_at or datetime.now(UTC)
        self._asked_model = model
        self._home = codex_home  # None: the session file is not read (a saved log)
        self.thread_id = ""
        self.final_text = ""
        self.usage: TokenUsage | None = None
        self.turns = 0
        self.failure = ""  # turn.failed's message, else the last error event that is not a retry
        self.retrying = ""  # the last "Reconnecting..." message: what a run that never ended was waiting for
        self.sandbox_failure = ""  # bwrap's error, when the sandbox could not start a command
        self.commands_ran = False  # a command ran (whatever its exit): the sandbox works
        self._doing: dict[str, str] = {}  # item id → its activity, while it runs

    def activity(self) -> str | None:
        return next(reversed(self._doing.values()), None) if self._doing else None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            self.thread_id = event["thread_id"]
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(event.get("item"), dict):
            self._item(kind, event["item"])
        elif kind == "turn.completed":
            self.turns += 1
            counted = _tokens(event.get("usage"))
            if counted is not None:
                self.usage = counted if self.usage is None else self.usage + counted
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            self.failure = message if isinstance(message, str) and message else self.failure or "turn.failed"
            self._doing.clear()
        elif kind == "error" and isinstance(event.get("message"), str):
            if event["message"].startswith(_RETRYING):
                self.retrying = event["message"]
            else:
                self.failure = event["message"]

    def _item(self, kind: str, item: dict[str, Any]) -> None:
        ident = str(item.get("id") or "")
        if kind == "item.completed":
            self._doing.pop(ident, None)
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                self.final_text = item["text"]
            if item.get("type") == "command_execution":
                self._command(item)
            return
        doing = item_activity(item)
        if doing is not None:
            self._doing.pop(ident, None)
            self._doing[ident] = doing

    def _command(self, item: dict[str, Any]) -> None:
        code = item.get("exit_code")
        output = item.get("aggregated_output")
        said = output if isinstance(output, str) else ""
        failed = isinstance(code, int) and code != 0
        why = bwrap_failure(said) if failed else None
        if why is None:
            self.commands_ran = self.commands_ran or isinstance(code, int)
        elif not self.sandbox_failure:
            self.sandbox_failure = why
        if failed:
            self._tool_error(said or f"exit {code}")

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._rest()
        error = describe_failure(outcome)
        said = self.failure
        if said:
            error = f"Codex reported an error: {one_line(said, 300)}"
        elif error is None and self.turns == 0:
            error = "Codex ended without finishing its turn (no turn.completed event)"
        elif error is not None and not said and self.retrying:
            error = f"{error}; Codex was retrying: {one_line(self.retrying, 200)}"
        facts = self._session()
        limit: UsageLimit | None = None
        kind: ErrorKind | None = None
        if error is not None and not ralph_stopped(outcome):
            # Codex prints the reset in its local time: ralph runs it with TZ=UTC.
            limit = from_text(f"{said}\n{outcome.stderr_tail}", self._now, UTC) if said or outcome.stderr_tail else None
            if limit is not None and facts.resets_at is not None:
                limit = replace(limit, resets_at=facts.resets_at, kind=facts.kind or limit.kind, source="session_file")
            if limit is not None:
                kind = ErrorKind.USAGE_LIMIT
            else:
                found = classify(said)
                if found is not None:
                    kind, error = found
        sandbox = self._sandbox_refused(facts)
        if kind is None and sandbox and not ralph_stopped(outcome):
            # Codex ends such a turn as if all went well: without this the loop sees only "no progress".
            kind, error = refused(sandbox)
        model = facts.model or self._asked_model
        return outcome_result(
            outcome,
            self.final_text,
            error,
            is_error=bool(said),
            model=model,
            cost_usd=cost_usd(model, self.usage),
            tokens=self.usage.all if self.usage else None,
            tool_errors=tuple(self.tool_errors),
            usage_limit=limit,
            windows=facts.windows,
            usage=self.usage,
            num_turns=self.turns or None,
            session_id=self.thread_id or None,
            error_kind=kind,
        )

    def _sandbox_refused(self, facts: session_file.SessionFacts) -> str:
        """bwrap's error when the sandbox could start none of the commands (of the stream, or of the session file,
        which also keeps those the stream leaves out); "" when some command ran or none failed so."""
        why = self.sandbox_failure or facts.sandbox_failure
        return "" if self.commands_ran or facts.commands_ran else why

    def _session(self) -> session_file.SessionFacts:
        if self._home is None or not self.thread_id:
            return session_file.SessionFacts()
        path = session_file.find(self._home, self.thread_id, self._now)
        return session_file.read(path) if path is not None else session_file.SessionFacts()


def _tokens(value: Any) -> TokenUsage | None:
    """`turn.completed.usage` in ralph's kinds: OpenAI's `input_tokens` includes the cached ones, which ralph
    counts apart as cache reads; reasoning tokens are inside `output_tokens` already."""
    if not isinstance(value, dict):
        return None
    counts = {key: whole(value.get(key)) for key in ("input_tokens", "cached_input_tokens", "output_tokens")}
    if all(count is None for count in counts.values()):
        return None
    total_in = counts["input_tokens"] or 0
    cached = min(counts["cached_input_tokens"] or 0, total_in)
    written = whole(value.get("cache_write_input_tokens")) or 0
    return TokenUsage(
        input_tokens=max(0, total_in - cached - written),
        output_tokens=max(0, counts["output_tokens"] or 0),
        cache_creation_tokens=max(0, min(written, total_in - cached)),
        cache_read_tokens=max(0, cached),
    )
