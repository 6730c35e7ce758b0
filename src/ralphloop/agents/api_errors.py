"""API failures an agent printed as its last word: the service failed, not the task.

Claude Code states them in a sentence of its own, on stdout in text mode (exit 1; exit 0 in some 2.1 versions),
as the `result` of an `is_error` result event in json and stream-json:
  "API Error: 500 {"type":"error","error":{"type":"api_error",...}}"            (2.0 to 2.1.7x)
  "API Error: 500 Internal server error. This is a server-side issue ..."        (2.1.329)
  "API Error: 529 Overloaded. ...", "API Error: Repeated 529 Overloaded errors"
  "API Error: Request rejected (429) · ..."                                       (2.1.329)
  "API Error: Rate limit reached"                                                 (2.1.4x to 2.1.8x)
  "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited"
An agent built on Anthropic's SDKs ends on the API's error envelope ({"type":"error","error":{"type":
"rate_limit_error",...}}) or on the SDK's exception ("anthropic.RateLimitError: Error code: 429 - {...}").

Only these whole shapes count, at the start of the one line a caller passes (the last line of stdout, of stderr):
an agent that quotes `rate_limit_error` in code it wrote, or ends on "API Error: 500 responses are retried now",
has not met an API failure. Only the kinds the loop retries after a backoff are read here. A 429 is a short-lived
rate limit: every 429 of Anthropic's API has the type rate_limit_error, the plan's usage limit included, so callers
look for the usage limit's own sentence first (limit_text.py). Pure: no I/O; no input makes `classify_line` raise.

The helpers at the end serve every backend's errors.py: the HTTP status a CLI's message states, the words of the
transient kinds, and a backend's table of failures (`Rule` rows) with its one reading, `classify_by`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Container, Mapping
from typing import Any, NamedTuple

from ralphloop.core.protocols import ErrorKind
from ralphloop.guards.usage import ANSI_ESCAPE
from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import one_line

_RATE = ErrorKind.RATE_LIMITED
_SERVER = ErrorKind.OVERLOADED
# The statuses worth a retry: 429 a rate limit; 500, 502, 503, 504 a failing API; 529 Anthropic's "overloaded".
_BY_STATUS = {429: _RATE, 500: _SERVER, 502: _SERVER, 503: _SERVER, 504: _SERVER, 529: _SERVER}
# Anthropic's error types (https://docs.anthropic.com/en/api/errors) for the same statuses.
_BY_TYPE = {"rate_limit_error": _RATE, "api_error": _SERVER, "overloaded_error": _SERVER, "timeout_error": _SERVER}

# What may stand before the sentence: spaces, and the bullets Claude Code's UI draws ("  ⎿  API Error: ...").
# Not a Markdown quote or list mark: an agent quoting an error in its summary has not met it.
_LEAD = " \t⎿●⏺"
# "API Error: WHAT", and "API Error (529 {...}) · Retrying in 1 seconds…" (the UI while it retries).
_CLAUDE = lazy(r"API Error(?::\s*|\s*\()(?P<what>.*)", re.DOTALL)
# WHAT as a status: alone, before the API's JSON body or a "·" detail, or with its HTTP reason phrase.
_STATUS = lazy(
    r"(?P<status>\d{3})(?:\s*$|\s*[{(·]|\s+(?:Internal server error|Overloaded|Service Unavailable|Bad Gateway|"
    r"Gateway Time-?out|Server Error|Too Many Requests)\b)",
    re.IGNORECASE,
)
_REJECTED = lazy(r"(?:Request rejected \(|Repeated )(?P<status>\d{3})\b")
_RATE_WORDS = lazy(r"Rate limit reached|Rate limited|Server is temporarily limiting requests", re.IGNORECASE)
_NETWORK_WORDS = lazy(r"Can't reach the API server|Connection error|Request timed out", re.IGNORECASE)
# SDK exceptions: Python's "anthropic.RateLimitError: Error code: 429 - {...}", Node's "Error: 529 {...}".
_SDK = lazy(r"[\w.]*Error: (?:Error code: (?P<coded>\d{3}) - |(?P<bare>\d{3}) \{)")

_MAX_JSON = 64 * 1024  # a longer last line is not an error message


def classify_line(line: str) -> tuple[ErrorKind, str] | None:
    """The API failure one output line states, and what it said on one line; None for anything else."""
    text = ANSI_ESCAPE.sub("", line).strip().lstrip(_LEAD)
    if text.startswith("{"):
        return _from_json(text)
    kind = sentence_kind(text)
    return (kind, one_line(text)) if kind is not None else None


def sentence_kind(text: str) -> ErrorKind | None:
    """The kind a Claude Code "API Error: ..." sentence or an SDK exception line starting `text` states."""
    claude = _CLAUDE.match(text)
    if claude is not None:
        return _claude_kind(claude["what"])
    sdk = _SDK.match(text)
    if sdk is not None:
        return _BY_STATUS.get(int(sdk["coded"] or sdk["bare"]))
    return None


def last_line(text: str) -> str:
    """The last line of `text` that is not blank, whole (a JSON line must not be cut)."""
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1 :]


def _claude_kind(what: str) -> ErrorKind | None:
    status = _STATUS.match(what) or _REJECTED.match(what)
    if status is not None:
        return _BY_STATUS.get(int(status["status"]))
    if _RATE_WORDS.match(what):
        return _RATE
    if what.lower().startswith("overloaded"):
        return _SERVER
    if _NETWORK_WORDS.match(what):
        return ErrorKind.NETWORK
    return None


def _from_json(text: str) -> tuple[ErrorKind, str] | None:
    """Anthropic's error envelope, or the `is_error` result event `claude -p --output-format json` ends on."""
    if len(text) > _MAX_JSON:
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, Mapping):
        return None
    if event.get("type") == "error" and isinstance(event.get("error"), Mapping):
        return _from_envelope(event["error"])
    if (
        event.get("type") == "result"
        and event.get("is_error") is True
        and event.get("api_error") != "usage_limit_reached"
    ):
        return _from_result(event)
    return None


def _from_envelope(error: Mapping[str, Any]) -> tuple[ErrorKind, str] | None:
    kind = _BY_TYPE.get(str(error.get("type")))
    if kind is None:
        return None
    message = error.get("message")
    return kind, one_line(f"{error.get('type')}: {message}" if isinstance(message, str) else str(error.get("type")))


def _from_result(event: Mapping[str, Any]) -> tuple[ErrorKind, str] | None:
    result = event.get("result")
    said = one_line(result) if isinstance(result, str) else ""
    status = event.get("api_error_status")
    kind = _BY_STATUS.get(status) if isinstance(status, int) and not isinstance(status, bool) else None
    kind = kind or _BY_TYPE.get(str(event.get("api_error_type"))) or sentence_kind(said)
    if kind is None:
        return None
    return kind, said or f"API error {status or event.get('api_error_type')}"


# ---------------------------------------------------------------- for every backend's errors.py

_5XX = range(500, 600)


def stated_status(pattern: re.Pattern[str], said: str) -> int | None:
    """The HTTP status `pattern` finds in a CLI's message (the first of its groups that matched), or None."""
    found = pattern.search(said)
    if found is None:
        return None
    return int(next(group for group in found.groups() if group is not None))


def said_and_status(said: str, pattern: re.Pattern[str]) -> tuple[str, int | None]:
    """A CLI's message on one line (300 characters at most), and the HTTP status `pattern` finds in that line."""
    said = one_line(said, 300)
    return said, stated_status(pattern, said)


# BAD_MODEL's line, with the fix ralph gives for a model the CLI does not know or cannot use.
UNAVAILABLE_MODEL = (
    "the model is not available ({said}). Fix: choose another with --model or agent.model in .ralph/config.yaml"
)


def api_says(api: str, window: str = "a short rate limit") -> dict[ErrorKind, str]:
    """What the screen says of each transient kind when `api` ("the OpenAI API") failed; `window` names its rate
    limit, which is not the plan's usage limit."""
    return {
        ErrorKind.NETWORK: f"{api} cannot be reached",
        ErrorKind.OVERLOADED: f"{api} is overloaded or failing",
        ErrorKind.RATE_LIMITED: f"{api} rate-limited the request ({window}, not the usage limit)",
    }


def transient(says: Mapping[ErrorKind, str], kind: ErrorKind, said: str) -> tuple[ErrorKind, str]:
    """A transient kind with the line to show: what `says` (a backend's words for its service) tells of it, then
    what the CLI said. The loop adds "retrying in Ns (attempt n/10)"."""
    return kind, f"{says[kind]}: {said}"


class Rule(NamedTuple):
    """One row of a backend's table of failures: its kind when the CLI's words match `words`, the stated HTTP
    status is one of `statuses` or a code it stated is one of `codes`, and the line to show (`says`, where {said} is
    what the CLI said and {name} a fact the backend passes)."""

    kind: ErrorKind | None  # None: the CLI names the task's own failure, an ordinary failed attempt: look no further
    words: re.Pattern[str] | None
    says: str
    statuses: Container[int] = ()
    model_404: bool = False  # a 404 whose words name a model is this row's too
    codes: Container[str] = ()  # the CLI's own codes for it (an error code, an exception's class, an exit code)
    only: Container[str] | None = None  # read only when the CLI stated one of these codes
    stderr: bool = False  # its words count on the CLI's stderr too
    unsaid: str = ""  # what {said} reads when the CLI said nothing: a template of the backend's facts


def transient_rules(
    says: Mapping[ErrorKind, str],
    rate: re.Pattern[str],
    overloaded: re.Pattern[str],
    network: re.Pattern[str],
    *,
    server: Container[int] = _5XX,
) -> tuple[Rule, ...]:
    """The three rows every table ends on, in this order: a rate limit (a 429 or `rate`'s words), a failing
    service (a `server` status, a 5xx by default, or `overloaded`'s words), an unreachable one (`network`'s words),
    each worded as `says` words it (`api_says` for an API's), then what the CLI said. The loop adds "retrying in Ns
    (attempt n/10)"."""
    return (
        Rule(_RATE, rate, says[_RATE] + ": {said}", (429,)),
        Rule(_SERVER, overloaded, says[_SERVER] + ": {said}", server),
        Rule(ErrorKind.NETWORK, network, says[ErrorKind.NETWORK] + ": {said}"),
    )


def classify_by(
    rules: tuple[Rule, ...],
    said: str,
    status: int | None = None,
    *,
    shown: str | None = None,
    codes: Collection[str] = (),
    stderr: str = "",
    facts: Mapping[str, str] | None = None,
) -> tuple[ErrorKind, str] | None:
    """The first row of `rules` that the CLI's words `said` (and `stderr`, for a row that reads it), the HTTP status
    it stated or one of the `codes` it stated match: its kind and the line to show, with `shown` (default: `said`)
    for {said}, the row's `unsaid` when that is empty, and `facts` for the other {names}; None when none does, or
    the row has no kind (an ordinary failed attempt: the task's problem, not the service's)."""
    for rule in rules:
        if rule.only is not None and not any(code in rule.only for code in codes):
            continue
        stated = status is not None and status in rule.statuses
        coded = any(code in rule.codes for code in codes)
        text = f"{said}\n{stderr}" if rule.stderr else said
        named = rule.words is not None and rule.words.search(text) is not None
        model = rule.model_404 and status == 404 and "model" in said.lower()
        if stated or coded or named or model:
            if rule.kind is None:
                return None
            known = facts or {}
            line = (said if shown is None else shown) or _filled(rule.unsaid, known)
            return rule.kind, _filled(rule.says, {**known, "said": line})
    return None


_PLACE = lazy(r"\{(\w+)\}")


def _filled(template: str, values: Mapping[str, str]) -> str:
    """`template` with each {name} of `values` replaced by its value, in one pass (a value is never read again)."""
    return _PLACE.sub(lambda found: values.get(found[1], found[0]), template)
