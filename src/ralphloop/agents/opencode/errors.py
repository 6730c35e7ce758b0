"""Why an opencode run failed: from its `error` event first, from its own error log lines (stderr) second, never
from the agent's words.

opencode 1.18.33 prints `{"type":"error","error":{"name":…,"data":{…}}}` once it gives up on a request (exit 1):
- `APIError` carries the provider's HTTP answer: `statusCode`, `message`, `isRetryable`, `responseBody`,
  `responseHeaders`; without a status when the provider could not be reached ("Cannot connect to API: …").
- `ProviderAuthError` (`providerID`, `message`): no usable credentials for the provider.
- `UnknownError` ("Unexpected server error. Check server logs for details.", `ref`): what failed is only in its log
  line of the same `ref` (log_lines.py), e.g. "ProviderModelNotFoundError: Model not found: fake/nope.".
- `ContextOverflowError`, `MessageOutputLengthError`, `ContentFilterError`, `MessageAbortedError`: the task's
  problem, an ordinary failed attempt.
Each kind comes with a one-line message carrying the fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ralphloop.agents.api_errors import Rule, classify_by, stated_status, transient_rules
from ralphloop.agents.fields import text, whole
from ralphloop.agents.opencode import log_lines
from ralphloop.agents.opencode.limits import usage_limit
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import ErrorKind
from ralphloop.words.textsafe import one_line

_STATUS = re.compile(r"\b(?:status(?:Code)?|statusCode\"?)\s*[:=]?\s*(?P<status>[1-5]\d\d)\b", re.IGNORECASE)
_AUTH = re.compile(
    r"ProviderAuthError|Incorrect API key|invalid[_ ]api[_ ]key|invalid x-api-key|authentication_error|"
    r"Unauthorized|API key (?:is )?missing|No API key|not logged in|token (?:has )?expired",
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"insufficient_quota|exceeded your current quota|check your plan and billing|credit balance is too low|"
    r"Payment Required|billing_hard_limit",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"ProviderModelNotFoundError|Model not found|model_not_found|The model `?[^`\s]+`? does not exist|"
    r"not_found_error[^.]{0,40}model|unsupported model",
    re.IGNORECASE,
)
_RATE = re.compile(r"Too Many Requests|rate[_ -]limit|rate increased too quickly", re.IGNORECASE)
_OVERLOADED = re.compile(
    r"overloaded|Service Unavailable|Internal Server Error|Bad Gateway|server_error|at capacity", re.IGNORECASE
)
_NETWORK = re.compile(
    r"Cannot connect to API|Unable to connect|fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|"
    r"socket hang up|connection (?:refused|reset|error)",
    re.IGNORECASE,
)

_TRANSIENT = {
    ErrorKind.NETWORK: "the model provider cannot be reached",
    ErrorKind.OVERLOADED: "the model provider is overloaded or failing",
    ErrorKind.RATE_LIMITED: "the model provider rate-limited the request (a short rate limit, not a usage limit)",
}


@dataclass(frozen=True, slots=True)
class Failure:
    """What an opencode failure was: its kind (None: an ordinary failed attempt), the line to show, the limit."""

    kind: ErrorKind | None
    message: str
    limit: UsageLimit | None = None


def from_event(error: Any, at: datetime, stderr: str) -> Failure:
    """The failure an `error` event's `error` object states, reported at `at`; `stderr` (opencode's own log lines)
    names what an `UnknownError` hides."""
    error = error if isinstance(error, Mapping) else {}
    name = text(error.get("name")) or "error"
    data = error.get("data") if isinstance(error.get("data"), Mapping) else {}
    said = text(data.get("message")) or name
    ref = text(data.get("ref"))
    if name == "UnknownError" and ref:
        said = log_lines.failed_with(stderr, ref) or said
    shown = one_line(f"{name}: {said}" if name not in said else said, 300)
    if name == "ProviderAuthError":
        return _auth(shown)
    if name == "APIError":
        status = whole(data.get("statusCode"))
        body = text(data.get("responseBody"))
        headers = data.get("responseHeaders")
        limit = usage_limit(status, said, body, headers if isinstance(headers, Mapping) else {}, at)
        if limit is not None:
            return Failure(ErrorKind.USAGE_LIMIT, f"the provider's usage limit was reached: {limit.message}", limit)
        found = _by_status(status, f"{said}\n{body}", shown)
        if found is not None:
            return found
    found = from_text(f"{said}\n{text(data.get('responseBody'))}", shown)
    return found or Failure(None, f"opencode reported an error: {shown}")


def from_text(said: str, shown: str | None = None) -> Failure | None:
    """The failure opencode's own words state (an error's message, a log line's error), or None when they state
    none of these kinds. `shown` is the line to show (default: `said` on one line)."""
    shown = shown or one_line(said, 300)
    if not said.strip():
        return None
    return _by_status(stated_status(_STATUS, said), said, shown)


_AUTH_SAYS = (
    "opencode cannot authenticate with the model provider ({said}). Fix: run `opencode auth login`, or set the "
    "provider's API key (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY)"
)
# opencode's failures, in the order they are told apart: the first row that matches names the kind.
RULES = (
    Rule(ErrorKind.AUTH, _AUTH, _AUTH_SAYS, statuses=(401, 403)),
    Rule(
        ErrorKind.BILLING,
        _BILLING,
        "the model provider's account has no credit or quota left ({said}). Fix: add credits or raise the limit with "
        "the provider, or choose another provider's model with --model",
        statuses=(402,),
    ),
    Rule(
        ErrorKind.BAD_MODEL,
        _MODEL,
        "the model is not available ({said}). Fix: choose another with --model provider/model (`opencode models` "
        "lists them) or agent.model in .ralph/config.yaml",
        model_404=True,
    ),
    *transient_rules(_TRANSIENT, _RATE, _OVERLOADED, _NETWORK),
)


def _by_status(status: int | None, said: str, shown: str) -> Failure | None:
    found = classify_by(RULES, said, status, shown=shown)
    return None if found is None else Failure(*found)


def _auth(shown: str) -> Failure:
    return Failure(ErrorKind.AUTH, _AUTH_SAYS.replace("{said}", shown))
