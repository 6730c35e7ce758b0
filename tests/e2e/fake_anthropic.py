"""A loopback fake of the Anthropic Messages API, scripted turn by turn, for driving the real `claude` CLI.

Point the CLI at it with `ANTHROPIC_BASE_URL=fake.url`. Each request of the *main conversation* consumes the
next scripted turn; when the script runs out the fake answers `default` (a plain text reply), so a test never hangs.
To make every further request fail, pass an `HttpError` as `default`.

Main conversation versus side requests: every main-conversation request of Claude Code 2.1.329 carries the
agent's tool list (`"tools": [...]`, non-empty), whereas side requests (a one-token quota probe, title or topic
generation, which other modes send) carry none. So a POST to `/v1/messages` (the CLI adds `?beta=true`) with a
non-empty `tools` list consumes a turn; any other `/v1/messages` request gets `side_reply`, a short text reply,
without touching the script. `/v1/messages/count_tokens` answers a rough token count, and any other path answers
`{}` with status 200 (in `-p` mode the CLI sends `HEAD /api/hello` unless CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
is set). With that variable set, a `-p` run sent only main-conversation requests.

One turn is one HTTP request, and the CLI retries some errors by itself, each retry taking the next turn:
- with CLAUDE_CODE_MAX_RETRIES=N > 0, a 401, 429 or 5xx is sent again up to N times;
- a 404 on a streaming request is always retried once without streaming (`"stream": false`), whatever N is;
- a 400 with an unrecognised message is retried several times with beta features stripped.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tests.e2e.scripted_server import HttpRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "FakeAnthropic",
    "HttpError",
    "Request",
    "Text",
    "ToolUse",
    "Turn",
    "Usage",
    "bash",
    "unified_headers",
    "write",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts reported for one reply; the CLI prices them and sums them into its `result` event."""

    input_tokens: int = 100
    output_tokens: int = 20
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass(frozen=True, slots=True)
class Text:
    """A plain text reply; with the default `end_turn` it ends the CLI's run."""

    text: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "end_turn"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A reply asking the CLI to run one tool (optionally after some text); the CLI answers with a tool_result."""

    name: str
    input: Mapping[str, Any]
    text: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error with an Anthropic-shaped body: `{"type": "error", "error": {"type": ..., "message": ...}}`."""

    status: int
    error_type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def authentication(cls) -> HttpError:
        return cls(401, "authentication_error", "invalid x-api-key")

    @classmethod
    def overloaded(cls) -> HttpError:
        return cls(529, "overloaded_error", "Overloaded")

    @classmethod
    def model_not_found(cls, model: str = "claude-nope") -> HttpError:
        return cls(404, "not_found_error", f"model: {model}")

    @classmethod
    def rate_limited(cls, retry_after: int = 1, headers: Mapping[str, str] | None = None) -> HttpError:
        return cls(
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50,000 input tokens per minute.",
            {"retry-after": str(retry_after), **(headers or {})},
        )


@dataclass(frozen=True, slots=True)
class Request(HttpRequest):
    """One request to the fake Messages API."""

    @property
    def is_main(self) -> bool:
        """True for a main-conversation `/v1/messages` call: only those carry the agent's tools."""
        return (
            self.method == "POST"
            and self.route == "/v1/messages"
            and isinstance(self.body, dict)
            and bool(self.body.get("tools"))
        )


Reply: TypeAlias = Text | ToolUse | HttpError
Turn: TypeAlias = Reply | Callable[[Request], Reply]


def unified_headers(status: str, reset: int, utilization: float = 1.0) -> dict[str, str]:
    """The subscription rate-limit headers of the real API for a five-hour window: `status` is allowed,
    allowed_warning or rejected; `reset` is unix seconds. Sent with an OAuth token, the CLI honours them."""
    return {
        "anthropic-ratelimit-unified-status": status,
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": status,
        "anthropic-ratelimit-unified-5h-reset": str(reset),
        "anthropic-ratelimit-unified-5h-utilization": f"{utilization:g}",
    }


def bash(command: str, text: str | None = None, usage: Usage | None = None) -> ToolUse:
    """A turn that makes the CLI run `command` with its Bash tool."""
    return ToolUse("Bash", {"command": command, "description": "Run a command"}, text, usage or Usage())


def write(file_path: str, content: str, text: str | None = None, usage: Usage | None = None) -> ToolUse:
    """A turn that makes the CLI write `content` to `file_path` with its Write tool."""
    return ToolUse("Write", {"file_path": file_path, "content": content}, text, usage or Usage())


_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):012d}"


def _content_blocks(reply: Text | ToolUse) -> list[dict[str, Any]]:
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    blocks.append({"type": "tool_use", "id": _new_id("toolu"), "name": reply.name, "input": dict(reply.input)})
    return blocks


def _stop_reason(reply: Text | ToolUse) -> str:
    return reply.stop_reason if isinstance(reply, Text) else "tool_use"


def message_json(reply: Text | ToolUse, model: str) -> dict[str, Any]:
    """The non-streaming answer: one complete message object."""
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content_blocks(reply),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": reply.usage.as_dict(),
    }


def message_events(reply: Text | ToolUse, model: str) -> Iterator[dict[str, Any]]:
    """The streaming answer as the data of each server-sent event, in the order the real API sends them."""
    whole = message_json(reply, model)
    start_usage = {**reply.usage.as_dict(), "output_tokens": 1}
    yield {"type": "message_start", "message": {**whole, "content": [], "stop_reason": None, "usage": start_usage}}
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            empty: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield {"type": "content_block_start", "index": index, "content_block": empty}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": stop, "usage": reply.usage.as_dict()}
    yield {"type": "message_stop"}


class FakeAnthropic(ScriptedServer[Request, Reply]):
    """The fake server: a ThreadingHTTPServer on 127.0.0.1 (free port) in a background thread.

    `turns` are consumed in order by main-conversation requests; a turn may be a callable that receives the
    `Request` and returns the reply. `headers` are added to every answer (e.g. the subscription-mode
    `anthropic-ratelimit-unified-*` headers); it is a plain dict, so a test may change it between runs.
    """

    def __init__(
        self,
        turns: Sequence[Turn] = (),
        *,
        default: Reply | None = None,
        side_reply: str = "Fake title",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(turns, default or Text("Done."))
        self.side_reply = side_reply
        self.headers: dict[str, str] = dict(headers or {})


class _Handler(ScriptedHandler):
    """Turns each HTTP request into a `Request`, asks the fake for the reply, and writes it."""

    fake: FakeAnthropic
    request_type = Request

    def do_HEAD(self) -> None:
        self._handle()

    def _own_headers(self) -> Mapping[str, str]:
        return {"request-id": _new_id("req"), **self.fake.headers}

    def _answer(self, request: Request, reply: Reply | None, raw: bytes) -> None:
        body = request.body
        model = str(body.get("model", "claude-fake")) if isinstance(body, dict) else "claude-fake"
        if request.route == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif request.route != "/v1/messages" or self.command != "POST":
            self._send_json(200, {})
        elif isinstance(reply, HttpError):
            error = {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}
            self._send_json(reply.status, error, reply.headers)
        else:
            answer = reply if reply is not None else Text(self.fake.side_reply, Usage(10, 5))
            if isinstance(body, dict) and body.get("stream"):
                self._send_events(message_events(answer, model))
            else:
                self._send_json(200, message_json(answer, model))


FakeAnthropic.handler = _Handler
