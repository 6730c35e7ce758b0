"""Why a Codex run failed, from the CLI's own error message (`turn.failed` / `error` events), never from the
agent's words.

Codex 0.169 states a failure only as text: "unexpected status 401 Unauthorized: …", "exceeded retry limit, last
status: 429 Too Many Requests", "We’re currently experiencing high demand …" (its 5xx), "Quota exceeded. Check
your plan and billing details." (insufficient_quota). The usage limit ("You’ve hit your usage limit …") is looked
for before these, by the parser. Each kind comes with a one-line message saying what to do.
"""

from __future__ import annotations

import re

from ralphloop.agents.api_errors import (
    UNAVAILABLE_MODEL,
    Rule,
    api_says,
    classify_by,
    said_and_status,
    transient_rules,
)
from ralphloop.core.protocols import ErrorKind

_STATUS = re.compile(r"(?:unexpected status|last status:)\s*(?P<status>\d{3})\b", re.IGNORECASE)
_AUTH = re.compile(
    r"Incorrect API key|invalid_api_key|Unauthorized|Not logged in|Please (?:log|sign) in|"
    r"refresh token (?:was|has) (?:already been used|expired)|token_expired|Missing environment variable",
    re.IGNORECASE,
)
_BILLING = re.compile(r"Quota exceeded|insufficient_quota|Check your plan and billing", re.IGNORECASE)
_MODEL = re.compile(
    r"model_not_found|The model `?[^`\s]+`? does not exist|model is not supported|unsupported model", re.IGNORECASE
)
_OVERLOADED = re.compile(
    r"experiencing high demand|server_is_overloaded|Internal server error|Service Unavailable|Bad Gateway|"
    r"slow_down|server_error",
    re.IGNORECASE,
)
_RATE = re.compile(r"Too Many Requests|rate_limit_exceeded|Rate limit reached", re.IGNORECASE)
_NETWORK = re.compile(
    r"stream disconnected before completion|error sending request|Connection (?:failed|refused|reset)|"
    r"failed to lookup address|dns error|timed out|waiting for network",
    re.IGNORECASE,
)

# Codex's failures, in the order they are told apart: the first row that matches names the kind.
RULES = (
    Rule(
        ErrorKind.AUTH,
        _AUTH,
        "Codex cannot authenticate ({said}). Fix: run `codex login`, or set OPENAI_API_KEY (and `codex login "
        "--with-api-key`)",
        statuses=(401, 403),
    ),
    Rule(
        ErrorKind.BILLING,
        _BILLING,
        "the OpenAI account has no quota left ({said}). Fix: add credits or raise the limit at platform.openai.com, "
        "or log in with a ChatGPT plan",
    ),
    Rule(ErrorKind.BAD_MODEL, _MODEL, UNAVAILABLE_MODEL, model_404=True),
    *transient_rules(api_says("the OpenAI API"), _RATE, _OVERLOADED, _NETWORK),
)


def classify(said: str) -> tuple[ErrorKind, str] | None:
    """The kind of failure `said` (Codex's own last error message) states, with a one-line message carrying the
    fix; None when it is none of these (an ordinary failed attempt: the task's problem, not the service's)."""
    said, status = said_and_status(said, _STATUS)
    return classify_by(RULES, said, status) if said else None
