"""Why a Gemini run failed, from the CLI's exit code and its own error message (the `result` event's
`error.message`, else its stderr), never from the agent's words.

Gemini CLI 0.61.0 ends its own failures with its own exit codes: 41 authentication (no auth method, a login that
failed), 42 input (no prompt, a bad @-file), 44 sandbox, 52 configuration, 53 the session's turn limit
(`maxSessionTurns`), 54 a fatal tool error (a full disk), 55 an untrusted folder, 130 cancelled. An API error ends
it with the HTTP status as the exit code, which the system cuts to 8 bits (429 → 173, 400 → 144, 401 → 145,
403 → 147, 500 → 244, 503 → 247; a missing model ended with 1), and its message is "[API Error: <the API's
message or JSON body>]", followed for a 429 by the CLI's advice ("Please wait and try again later. …").
The usage limit (quota.py) is looked for before these. Each kind comes with a one-line message saying what to do.
"""

from __future__ import annotations

import re

from ralphloop.agents.api_errors import (
    UNAVAILABLE_MODEL,
    Rule,
    api_says,
    classify_by,
    stated_status,
    transient_rules,
)
from ralphloop.core.protocols import ErrorKind
from ralphloop.words.textsafe import one_line

STATUS_BY_EXIT = {status % 256: status for status in (400, 401, 403, 404, 408, 429, 499, 500, 502, 503, 504)}
# The statuses of a failing (or timed-out) API: a 5xx, 408 or 499.
_FAILING = frozenset({*range(500, 600), 408, 499})
_REFUSED_EXITS = {42: "its input", 44: "its sandbox", 52: "its configuration", 55: "an untrusted folder"}
_CODE = re.compile(r'"code"\s*:\s*(?P<status>\d{3})\b')
_AUTH = re.compile(
    r"API key not valid|API_KEY_INVALID|API key expired|UNAUTHENTICATED|Please set an Auth method|"
    r"must specify the GEMINI_API_KEY|Invalid auth method|Failed to login|invalid_grant|Consumer has been suspended",
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"BILLING_DISABLED|requires billing to be enabled|billing account|INSUFFICIENT_G1_CREDITS_BALANCE|"
    r"insufficient credits",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"is not found for API version|ModelNotFoundError|Model not found|is not supported for generateContent|"
    r"Invalid model name",
    re.IGNORECASE,
)
_RATE = re.compile(
    r"RESOURCE_EXHAUSTED|Resource has been exhausted|exceeded your current quota|Too Many Requests", re.IGNORECASE
)
_OVERLOADED = re.compile(
    r"model is overloaded|\bUNAVAILABLE\b|Service Unavailable|internal error has occurred|\bINTERNAL\b|Bad Gateway|"
    r"DEADLINE_EXCEEDED",
)
_NETWORK = re.compile(
    r"fetch failed|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|socket hang up|"
    r"UND_ERR_CONNECT_TIMEOUT",
)

_TRANSIENT = api_says("the Gemini API", "a short quota window")


def http_status(said: str, exit_code: int | None) -> int | None:
    """The HTTP status of the API error that ended the run: from the exit code, else the JSON body quoted."""
    if exit_code in STATUS_BY_EXIT:
        return STATUS_BY_EXIT[exit_code]
    return stated_status(_CODE, said)


# Gemini's failures, in the order they are told apart: the first row that matches names the kind. An exit code is
# the code "exit:N".
RULES = (
    Rule(
        ErrorKind.BILLING,
        _BILLING,
        "the Google account cannot pay for the Gemini API ({said}). Fix: enable billing or add credits for the key's "
        "project in Google AI Studio, or log in with another account",
    ),
    Rule(
        ErrorKind.AUTH,
        _AUTH,
        "Gemini CLI cannot authenticate ({said}). Fix: set GEMINI_API_KEY, or run `gemini` once to log in with Google",
        statuses=(401, 403),
        codes=("exit:41",),
        unsaid="exit code {exit}",
    ),
    Rule(ErrorKind.BAD_MODEL, _MODEL, UNAVAILABLE_MODEL, statuses=(404,)),
    *(
        Rule(
            ErrorKind.REFUSED,
            None,
            f"Gemini CLI refused to run because of {what} (exit code {code}): " + "{said}",
            codes=(f"exit:{code}",),
            unsaid="no message",
        )
        for code, what in _REFUSED_EXITS.items()
    ),
    Rule(
        ErrorKind.MAX_TURNS,
        None,
        "Gemini CLI reached its session turn limit: {said}",
        codes=("exit:53",),
        unsaid="maxSessionTurns",
    ),
    *transient_rules(_TRANSIENT, _RATE, _OVERLOADED, _NETWORK, server=_FAILING),
)


def classify(said: str, exit_code: int | None) -> tuple[ErrorKind, str] | None:
    """The kind of failure Gemini's own message `said` and its exit code state, with a one-line message carrying
    the fix; None when it is none of these (an ordinary failed attempt: the task's problem, not the service's)."""
    said = one_line(said, 300)
    status = http_status(said, exit_code)
    return classify_by(RULES, said, status, codes=(f"exit:{exit_code}",), facts={"exit": str(exit_code)})
