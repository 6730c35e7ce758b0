"""A loopback fake of the OpenAI Responses API, scripted turn by turn, for driving the real `codex` CLI.

Point Codex at it with a model provider in `$CODEX_HOME/config.toml` (`codex_config(fake)` writes one):
`base_url = fake.url` (ending in `/v1`), `wire_api = "responses"`, `env_key` naming a variable that holds a
fake key. Each `POST /v1/responses` consumes the next scripted turn; when the script runs out the fake answers
`default` (a plain message), so a test never hangs. Pass an `HttpError` as `default` to make every further
request fail.

The answer to a streaming request is Server-Sent Events in the Responses API's format: `response.created`, then
for each output item `response.output_item.added`, (for a message) `response.output_text.delta`, and
`response.output_item.done` with the whole item, then `response.completed` carrying the response id and its
`usage` (`input_tokens`, `input_tokens_details.cached_tokens`, `output_tokens`,
`output_tokens_details.reasoning_tokens`, `total_tokens`).

WebSockets: the provider says `supports_websockets = false`, and the fake answers any request other than
`POST /v1/responses` (a WebSocket upgrade is a GET) with a plain 404, never switching protocols. With an API key
and this provider, 0.169.0 sent only `POST /v1/responses` (also without the `supports_websockets` line).

The tools 0.169.0 offers with an unknown model (fallback metadata) are `exec_command` (the shell: `{"cmd": ...}`),
`write_stdin`, `request_user_input`, `view_image`, `multi_agent_v1`, goals and `web_search`: no `shell`, no
`apply_patch` (a call to `shell` is answered "unsupported call: shell"). `shell()` builds an `exec_command` call.

Codex retries a failed request by itself (`request_max_retries`, `stream_max_retries` of the provider; 0 in
`codex_config`), each retry taking the next turn. A 429 whose body is
`{"error": {"type": "usage_limit_reached", "plan_type": ..., "resets_at": <unix seconds>}}` is not retried: Codex
prints "You’ve hit your usage limit. … try again at <resets_at in local time>." (`HttpError.usage_limit`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tests.e2e.scripted_server import HttpRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "FAKE_API_KEY",
    "FAKE_KEY_VARIABLE",
    "FakeOpenAI",
    "FunctionCall",
    "HttpError",
    "Message",
    "Request",
    "Turn",
    "Usage",
    "codex_config",
    "shell",
]

FAKE_KEY_VARIABLE = "RALPH_FAKE_OPENAI_KEY"
FAKE_API_KEY = "sk-fake-openai"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one response. `input_tokens` includes `cached_tokens`; `output_tokens` includes
    `reasoning_tokens` (as the real API reports them)."""

    input_tokens: int = 100
    cached_tokens: int = 0
    output_tokens: int = 20
    reasoning_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


@dataclass(frozen=True, slots=True)
class Message:
    """A final assistant message: it ends Codex's turn."""

    text: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A reply asking Codex to call one of its tools; Codex answers with a `function_call_output` input item."""

    name: str
    arguments: Mapping[str, Any]
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error with an OpenAI-shaped JSON body."""

    status: int
    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def usage_limit(cls, resets_at: int, plan_type: str = "plus") -> HttpError:
        """The ChatGPT-plan usage limit: Codex says "You’ve hit your usage limit … try again at <resets_at>"."""
        return cls(429, {"error": {"type": "usage_limit_reached", "plan_type": plan_type, "resets_at": resets_at}})


@dataclass(frozen=True, slots=True)
class Request(HttpRequest):
    """One request to the fake Responses API."""

    @property
    def is_main(self) -> bool:
        """True for a `POST /v1/responses`: those consume turns."""
        return self.method == "POST" and self.route == "/v1/responses"


Reply: TypeAlias = Message | FunctionCall | HttpError
Turn: TypeAlias = Reply | Callable[[Request], Reply]


def shell(command: str, usage: Usage | None = None) -> FunctionCall:
    """A turn that makes Codex run `command` with the shell tool 0.169.0 offers, `exec_command` (`cmd`, a shell
    command line; without a PTY, so the output comes back whole)."""
    return FunctionCall("exec_command", {"cmd": command, "tty": False, "yield_time_ms": 10000}, usage or Usage())


def codex_config(fake: FakeOpenAI, model: str) -> str:
    """The `config.toml` that points Codex at `fake`: its model, the provider, no retries, no WebSockets."""
    return (
        f'model = "{model}"\n'
        'model_provider = "fake"\n'
        "\n[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{fake.url}"\n'
        f'env_key = "{FAKE_KEY_VARIABLE}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "supports_websockets = false\n"
    )


_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):012d}"


def _output_item(reply: Message | FunctionCall) -> dict[str, Any]:
    if isinstance(reply, Message):
        return {
            "type": "message",
            "id": _new_id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
    return {
        "type": "function_call",
        "id": _new_id("fc"),
        "call_id": _new_id("call"),
        "name": reply.name,
        "arguments": json.dumps(dict(reply.arguments)),
        "status": "completed",
    }


def response_events(reply: Message | FunctionCall, model: str) -> Iterator[dict[str, Any]]:
    """The streaming answer: the data of each server-sent event, in the order the real API sends them."""
    response_id = _new_id("resp")
    base = {"id": response_id, "object": "response", "model": model, "output": []}
    sequence = itertools.count()
    yield {"type": "response.created", "sequence_number": next(sequence), "response": {**base, "status": "in_progress"}}
    item = _output_item(reply)
    started = {**item, "status": "in_progress"}
    if isinstance(reply, Message):
        started["content"] = []
    yield {"type": "response.output_item.added", "sequence_number": next(sequence), "output_index": 0, "item": started}
    if isinstance(reply, Message):
        yield {
            "type": "response.output_text.delta",
            "sequence_number": next(sequence),
            "item_id": item["id"],
            "output_index": 0,
            "content_index": 0,
            "delta": reply.text,
        }
    yield {"type": "response.output_item.done", "sequence_number": next(sequence), "output_index": 0, "item": item}
    done = {**base, "status": "completed", "output": [item], "usage": reply.usage.as_dict()}
    yield {"type": "response.completed", "sequence_number": next(sequence), "response": done}


class FakeOpenAI(ScriptedServer[Request, Reply]):
    """The fake server: a ThreadingHTTPServer on 127.0.0.1 (free port) in a background thread.

    `turns` are consumed in order by `POST /v1/responses`; a turn may be a callable that receives the `Request`
    and returns the reply. `headers` go with every answer.
    """

    path = "/v1"  # Codex's base_url ends in /v1

    def __init__(
        self, turns: Sequence[Turn] = (), *, default: Reply | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(turns, default or Message("Done."))
        # added to every answer (e.g. the ChatGPT plan's `x-codex-primary-used-percent`, which Codex writes into its
        # session file's rate_limits); a plain dict, so a test (or a turn) may change it between answers
        self.headers: dict[str, str] = dict(headers or {})


class _Handler(ScriptedHandler):
    fake: FakeOpenAI
    request_type = Request

    def _parse(self, raw: bytes) -> Any:
        if self.headers.get("Content-Encoding", "").lower() == "zstd":
            return None  # not expected from Codex with an API key; recorded without a body
        return super()._parse(raw)

    def _own_headers(self) -> Mapping[str, str]:
        return {"x-request-id": _new_id("req"), **self.fake.headers}

    def _answer(self, request: Request, reply: Reply | None, raw: bytes) -> None:
        if reply is None:
            self._send_json(404, {"error": {"type": "not_found", "message": f"no route {self.command} {self.path}"}})
        elif isinstance(reply, HttpError):
            self._send_json(reply.status, reply.body, reply.headers)
        else:
            body = request.body
            model = str(body.get("model", "gpt-fake")) if isinstance(body, dict) else "gpt-fake"
            self._send_events(response_events(reply, model))


FakeOpenAI.handler = _Handler
