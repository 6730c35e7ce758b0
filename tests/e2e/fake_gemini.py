"""A loopback fake of the Gemini API (generativelanguage `v1beta`), scripted turn by turn, for driving the real
`gemini` CLI.

Point Gemini CLI 0.61.0 at it with `GOOGLE_GEMINI_BASE_URL=fake.url` and `GEMINI_API_KEY=<anything>`, and
`security.auth.selectedType = "gemini-api-key"` in `$HOME/.gemini/settings.json` (`gemini_settings()` writes it):
with the base URL alone the CLI picks its "gateway" auth type, which `-p` mode refuses ("Invalid auth method
selected.", exit 41). The key arrives in the `x-goog-api-key` header.

Requests: the conversation itself is `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`; each consumes the
next scripted turn (when the script runs out the fake answers `default`, a plain text reply, so a test never
hangs). Without `-m`, the CLI first asks a small model which model to use (its "router":
`POST /v1beta/models/MODEL:generateContent` with a JSON response schema); that side request is answered
`router_reply` (a low complexity score: the CLI then picks its flash model) without touching the script. Any
other request gets a 404.

The answer to a streaming request is Server-Sent Events, each `data:` a `GenerateContentResponse`: one chunk
with the reply's part (`text`, or a `functionCall` with `name` and `args`), `finishReason: "STOP"`, the
`usageMetadata` (`promptTokenCount` including `cachedContentTokenCount`, `candidatesTokenCount`,
`thoughtsTokenCount`, `totalTokenCount` = prompt + candidates + thoughts) and `modelVersion`: the CLI keys its
token statistics by `modelVersion`, so that is the model a run reports.

Errors are Google's JSON envelope `{"error": {"code", "message", "status", "details"}}`. The CLI retries a 429
or 5xx by itself (`general.maxAttempts` in settings.json, 10 by default, with backoff starting at 5 s; at most 3
"silent" capacity retries): `gemini_settings()` sets it to 1, so one error turn is one request and no backoff
delays a test. How 0.61.0 reads a 429 (`classifyGoogleError`): a `QuotaFailure` whose `quotaId` has "PerDay" or
"Daily" becomes "You have exhausted your daily quota on this model." (no reset); "Please retry in Ns." in the
message with N over 300 s is a terminal quota error that keeps the server's message; "exhausted your capacity"
likewise; anything else is retried.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tests.e2e.scripted_server import HttpRequest, ScriptedHandler, ScriptedServer

__all__ = [
    "FAKE_API_KEY",
    "FakeGemini",
    "FunctionCall",
    "HttpError",
    "Request",
    "Text",
    "Turn",
    "Usage",
    "gemini_settings",
]

FAKE_API_KEY = "fake-gemini-key"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one reply, as the API reports them: `prompt_tokens` includes `cached_tokens`."""

    prompt_tokens: int = 1000
    cached_tokens: int = 0
    output_tokens: int = 20  # candidatesTokenCount
    thoughts_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "promptTokenCount": self.prompt_tokens,
            "cachedContentTokenCount": self.cached_tokens,
            "candidatesTokenCount": self.output_tokens,
            "thoughtsTokenCount": self.thoughts_tokens,
            "totalTokenCount": self.prompt_tokens + self.output_tokens + self.thoughts_tokens,
        }


@dataclass(frozen=True, slots=True)
class Text:
    """A final answer: it ends the CLI's turn. `model_version` "" answers with the model the request named."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model_version: str = ""


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A reply asking the CLI to call one of its tools (`write_file`, `replace`, `run_shell_command`, ...)."""

    name: str
    args: Mapping[str, Any]
    usage: Usage = field(default_factory=Usage)
    model_version: str = ""


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error with Google's JSON error envelope."""

    status: int
    message: str
    reason: str = ""  # the envelope's `status` ("RESOURCE_EXHAUSTED"); "" picks one from the HTTP status
    details: tuple[Mapping[str, Any], ...] = ()

    @property
    def body(self) -> dict[str, Any]:
        names = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}
        status = self.reason or names.get(self.status, "INTERNAL" if self.status >= 500 else "UNKNOWN")
        error = {"code": self.status, "message": self.message, "status": status, "details": list(self.details)}
        return {"error": error}

    @classmethod
    def quota(cls, retry_s: float, *, quota_id: str = "GenerateRequestsPerMinutePerProjectPerModel") -> HttpError:
        """A 429 quota error as the Gemini API words it: the message ends "Please retry in Ns.", with a
        QuotaFailure naming `quota_id` and a RetryInfo. A daily quota id ("...PerDay...") makes the CLI say
        "You have exhausted your daily quota on this model." instead of the message."""
        message = (
            "You exceeded your current quota, please check your plan and billing details. For more information on "
            "this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
            "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, "
            f"limit: 250\nPlease retry in {retry_s}s."
        )
        violation = {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": quota_id,
            "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
            "quotaValue": "250",
        }
        details = (
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{int(retry_s)}s"},
        )
        return cls(429, message, details=details)

    @classmethod
    def daily_quota(cls) -> HttpError:
        """The free tier's requests-per-day quota used up."""
        return cls.quota(26.5, quota_id="GenerateRequestsPerDayPerProjectPerModel-FreeTier")


@dataclass(frozen=True, slots=True)
class Request(HttpRequest):
    """One request to the fake Gemini API."""

    @property
    def model(self) -> str:
        """The model the request's path names (`/v1beta/models/MODEL:method`)."""
        return self.route.rsplit("/", 1)[-1].split(":")[0]

    @property
    def is_main(self) -> bool:
        """True for the conversation's streaming requests: those consume turns."""
        return self.method == "POST" and self.route.endswith(":streamGenerateContent")

    @property
    def is_router(self) -> bool:
        return self.method == "POST" and self.route.endswith(":generateContent")

    def texts(self) -> list[str]:
        """Every text part of the request's `contents`, in order."""
        contents = self.body.get("contents", []) if isinstance(self.body, dict) else []
        return [part["text"] for turn in contents for part in turn.get("parts", []) if "text" in part]

    def function_responses(self) -> list[dict[str, Any]]:
        """The `functionResponse` parts of the request: what the CLI's tools answered."""
        contents = self.body.get("contents", []) if isinstance(self.body, dict) else []
        parts = [part for turn in contents for part in turn.get("parts", [])]
        return [part["functionResponse"] for part in parts if "functionResponse" in part]


Reply: TypeAlias = Text | FunctionCall | HttpError
Turn: TypeAlias = Reply | Callable[[Request], Reply]

ROUTER_REPLY = Text(json.dumps({"complexity_reasoning": "a small task", "complexity_score": 10}), Usage(300, 0, 10))


def gemini_settings(*, max_attempts: int = 1) -> dict[str, Any]:
    """`$HOME/.gemini/settings.json` for a run against the fake: API-key auth (so GOOGLE_GEMINI_BASE_URL is used),
    `max_attempts` attempts per request (1: no retries, no backoff waits), and no usage statistics or update
    checks (nothing leaves the machine)."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": max_attempts, "enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
    }


_ids = itertools.count(1)


def response_chunk(reply: Text | FunctionCall, model: str) -> dict[str, Any]:
    """The one `GenerateContentResponse` the fake streams for a reply."""
    part: dict[str, Any] = (
        {"text": reply.text} if isinstance(reply, Text) else {"functionCall": {"name": reply.name, "args": reply.args}}
    )
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": reply.usage.as_dict(),
        "modelVersion": reply.model_version or model,
        "responseId": f"fake-response-{next(_ids)}",
    }


class FakeGemini(ScriptedServer[Request, Reply]):
    """The fake server: a ThreadingHTTPServer on 127.0.0.1 (free port) in a background thread.

    `turns` are consumed in order by the streaming requests; a turn may be a callable that receives the `Request`
    and returns the reply.
    """

    def __init__(self, turns: Sequence[Turn] = (), *, default: Reply | None = None, router: Reply | None = None):
        super().__init__(turns, default or Text("Done."))
        self.router_reply = router or ROUTER_REPLY


class _Handler(ScriptedHandler):
    fake: FakeGemini
    request_type = Request

    def _answer(self, request: Request, reply: Reply | None, raw: bytes) -> None:
        if reply is None and request.is_router:
            reply = self.fake.router_reply
        if reply is None:
            self._send_json(404, HttpError(404, f"no route {self.command} {self.path}").body)
        elif isinstance(reply, HttpError):
            self._send_json(reply.status, reply.body)
        elif request.is_main:
            chunk = response_chunk(reply, request.model)
            self._send(200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        else:
            self._send_json(200, response_chunk(reply, request.model))


FakeGemini.handler = _Handler
