"""A loopback fake of the OpenAI Chat Completions API, scripted turn by turn, for any CLI that speaks it.

It serves every agent CLI that can be pointed at an "OpenAI-compatible" provider (opencode, aider, Copilot's
bring-your-own-key mode), so nothing in it is specific to one CLI: a tool call names whatever tool the CLI under
test offers (read it from `Request.tool_names`), with any JSON arguments.

Routes (the base URL, `fake.url`, ends in `/v1`):
- `POST .../chat/completions` (normally `/v1/chat/completions`) is the conversation: each request consumes the
  next scripted turn; when the script runs out the fake answers `default` (a plain message), so a test never
  hangs. Pass an `HttpError` as `default` to make every further request fail.
- `GET /v1/models` lists `models` (`{"object": "list", "data": [{"id": ..., "object": "model", ...}]}`).
- anything else answers 404 with an OpenAI-shaped error body, without touching the script.

A request with `"stream": true` is answered with Server-Sent Events, one `chat.completion.chunk` per `data:`
line and a final `data: [DONE]`: a first chunk with `delta.role`, the text in `delta.content` pieces, each tool
call as `delta.tool_calls[i]` (its `id`, `type` and `function.name` first, then `function.arguments` in pieces),
then a chunk with the `finish_reason` ("stop" or "tool_calls"). With `"stream_options": {"include_usage": true}`
every chunk carries `"usage": null` and one more chunk with empty `choices` carries the usage, as the real API
does. Without streaming the answer is one `chat.completion` object with `message.content`,
`message.tool_calls` and `usage`.

The usage is in the Chat Completions shape: `prompt_tokens` (including
`prompt_tokens_details.cached_tokens`), `completion_tokens` (including
`completion_tokens_details.reasoning_tokens`) and `total_tokens`. The answer's `model` is the request's, unless
the reply names another (to test that a CLI records the model that answered).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tests.e2e.scripted_server import HttpRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "FAKE_API_KEY",
    "Call",
    "FakeOpenAIChat",
    "HttpError",
    "Message",
    "Request",
    "ToolCalls",
    "Turn",
    "Usage",
    "tool_call",
]

FAKE_API_KEY = "sk-fake-chat"
PIECE = 16  # characters per streamed `content` or `arguments` delta: a client must join the pieces


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one answer, as the Chat Completions API reports them: `prompt_tokens` includes
    `cached_tokens`, `completion_tokens` includes `reasoning_tokens`."""

    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }


@dataclass(frozen=True, slots=True)
class Message:
    """A final assistant message (`finish_reason` "stop"): it ends the CLI's turn."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str | None = None  # the model the answer names; None echoes the request's


@dataclass(frozen=True, slots=True)
class Call:
    """One function call: the tool's name as the CLI offered it, and its arguments (sent as a JSON string)."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """An answer asking the CLI to call tools (`finish_reason` "tool_calls"), optionally after some text; the
    CLI runs them and sends their results as `role: "tool"` messages in its next request."""

    calls: Sequence[Call]
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str | None = None


def tool_call(name: str, arguments: Mapping[str, Any], *, text: str = "", usage: Usage | None = None) -> ToolCalls:
    """A turn calling one tool, `name`, with `arguments`."""
    return ToolCalls((Call(name, arguments),), text, usage or Usage())


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error: its status, JSON body and extra headers (such as `retry-after`)."""

    status: int
    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def error_body(message: str, kind: str, code: str | None) -> dict[str, Any]:
        """The body the real API sends with an error: `{"error": {message, type, param, code}}`."""
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    @classmethod
    def rate_limited(cls, retry_after: int | None = 1, headers: Mapping[str, str] | None = None) -> HttpError:
        """A 429 for too many requests, with `retry-after` seconds (None: no such header)."""
        extra = {"retry-after": str(retry_after)} if retry_after is not None else {}
        body = cls.error_body(
            "Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded"
        )
        return cls(429, body, {**extra, **(headers or {})})

    @classmethod
    def insufficient_quota(cls) -> HttpError:
        """The 429 of a spent quota or an unpaid bill: not a rate limit, waiting does not help."""
        message = "You exceeded your current quota, please check your plan and billing details."
        return cls(429, cls.error_body(message, "insufficient_quota", "insufficient_quota"))

    @classmethod
    def authentication(cls) -> HttpError:
        """A 401 for a wrong API key."""
        body = cls.error_body("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        return cls(401, body)

    @classmethod
    def model_not_found(cls, model: str) -> HttpError:
        """A 404 for a model the provider does not serve."""
        message = f"The model `{model}` does not exist or you do not have access to it."
        return cls(404, cls.error_body(message, "invalid_request_error", "model_not_found"))

    @classmethod
    def server_error(cls, status: int = 500) -> HttpError:
        """A 5xx; 503 is the API's "overloaded"."""
        return cls(
            status, cls.error_body("The server had an error while processing your request.", "server_error", None)
        )


@dataclass(frozen=True, slots=True)
class Request(HttpRequest):
    """One request to the fake Chat Completions API."""

    @property
    def is_main(self) -> bool:
        """True for a `POST .../chat/completions`: those consume turns."""
        return self.method == "POST" and self.route.endswith("/chat/completions")

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation the CLI sent (empty for other requests)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def tool_names(self) -> list[str]:
        """The names of the function tools the CLI offered in this request."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        functions = (tool.get("function") for tool in tools if isinstance(tool, dict))
        return [str(function["name"]) for function in functions if isinstance(function, dict) and "name" in function]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The `role: "tool"` messages of this request (the results of tool calls)."""
        return [message for message in self.messages if message.get("role") == "tool"]


Reply: TypeAlias = Message | ToolCalls | HttpError
Turn: TypeAlias = Reply | Callable[[Request], Reply]

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}-fake{next(_ids):012d}"


def _pieces(text: str) -> list[str]:
    return [text[start : start + PIECE] for start in range(0, len(text), PIECE)]


def _tool_call_items(reply: ToolCalls) -> list[dict[str, Any]]:
    return [
        {
            "id": _new_id("call"),
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
        }
        for call in reply.calls
    ]


def _finish_reason(reply: Message | ToolCalls) -> str:
    return "tool_calls" if isinstance(reply, ToolCalls) else "stop"


def completion(reply: Message | ToolCalls, model: str) -> dict[str, Any]:
    """The non-streaming answer: one `chat.completion` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if isinstance(reply, ToolCalls):
        message["tool_calls"] = _tool_call_items(reply)
    return {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(reply)}],
        "usage": reply.usage.as_dict(),
        "system_fingerprint": None,
    }


def chunks(reply: Message | ToolCalls, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The streaming answer: the data of each `chat.completion.chunk`, in the order the real API sends them."""
    base: dict[str, Any] = {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": reply.model or model,
        "system_fingerprint": None,
    }
    if include_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _pieces(reply.text):
        yield chunk({"content": piece})
    if isinstance(reply, ToolCalls):
        for index, item in enumerate(_tool_call_items(reply)):
            function = item["function"]
            head = {
                "index": index,
                "id": item["id"],
                "type": "function",
                "function": {"name": function["name"], "arguments": ""},
            }
            yield chunk({"tool_calls": [head]})
            for piece in _pieces(function["arguments"]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish_reason(reply))
    if include_usage:
        yield {**base, "choices": [], "usage": reply.usage.as_dict()}


class FakeOpenAIChat(ScriptedServer[Request, Reply]):
    """The fake server: a ThreadingHTTPServer on 127.0.0.1 (free port) in a background thread.

    `turns` are consumed in order by `POST .../chat/completions`; a turn may be a callable that receives the
    `Request` and returns the reply. `models` is what `GET /v1/models` lists. `headers` are added to every
    answer; it is a plain dict, so a test may change it between requests.
    """

    path = "/v1"

    def __init__(
        self,
        turns: Sequence[Turn] = (),
        *,
        default: Reply | None = None,
        models: Sequence[str] = ("gpt-fake",),
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(turns, default or Message("Done."))
        self.models = list(models)
        self.headers: dict[str, str] = dict(headers or {})


class _Handler(ScriptedHandler):
    fake: FakeOpenAIChat
    request_type = Request

    def _own_headers(self) -> Mapping[str, str]:
        return {"x-request-id": _new_id("req"), **self.fake.headers}

    def _answer(self, request: Request, reply: Reply | None, raw: bytes) -> None:
        if reply is None and self.command == "GET" and request.route.endswith("/models"):
            listing = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in self.fake.models]
            self._send_json(200, {"object": "list", "data": listing})
        elif reply is None:
            message = f"Unknown request URL: {self.command} {request.route}"
            self._send_json(404, HttpError.error_body(message, "invalid_request_error", "unknown_url"))
        elif isinstance(reply, HttpError):
            self._send_json(reply.status, reply.body, reply.headers)
        else:
            data = request.body if isinstance(request.body, dict) else {}
            model = str(data.get("model") or "gpt-fake")
            if data.get("stream") is True:
                options = data.get("stream_options")
                include_usage = isinstance(options, dict) and options.get("include_usage") is True
                lines = [f"data: {json.dumps(item)}\n\n" for item in chunks(reply, model, include_usage)]
                self._send(200, "text/event-stream", "".join([*lines, "data: [DONE]\n\n"]).encode())
            else:
                self._send_json(200, completion(reply, model))


FakeOpenAIChat.handler = _Handler
