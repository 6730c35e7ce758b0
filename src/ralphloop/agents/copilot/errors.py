"""Why a Copilot run failed, from the CLI's own error event (`session.error`: `errorType`, `errorCode`,
`statusCode`, `message`) and, when it printed none, from its own `Error: …` lines on stderr; never from the
agent's words.

Copilot 1.0.102 names the kind itself: `errorType` is "authentication", "authorization", "policy", "quota",
"rate_limit", "context_limit" or "query" (everything else), and for a rate limit or a quota `errorCode` is the
service's code ("rate_limited", "user_weekly_rate_limited", "user_global_rate_limited", "user_model_rate_limited",
"integration_rate_limited"; "quota_exceeded", "session_quota_exceeded", "billing_not_configured"). A custom
provider's (BYOK) error carries no `errorCode` in the event; its `model.call_failure` event does, and the parser
hands that one over. The message starts with the HTTP status and the service's own words ("429 You have exceeded
your weekly rate limit. Please try again in 2 hours.").

A rate limit is the usage limit when it lasts: when the message says when it ends ("try again in 2 hours",
"resets at …") more than SHORT_WAIT away, or when the code or the CLI's sentence says the account's weekly,
session, model or global limit is reached. Else it is a short rate limit, retried after a backoff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from ralphloop.agents.api_errors import UNAVAILABLE_MODEL, Rule, api_says, classify_by, stated_status
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import ErrorKind
from ralphloop.guards.reset_time import DURATION_TEXT, RESET_TEXT, parse_reset
from ralphloop.guards.usage import clean_message
from ralphloop.words.textsafe import one_line

SHORT_WAIT: Final = timedelta(minutes=5)  # a rate limit that ends sooner is retried, not waited out

_ISO = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?"
_RESET = re.compile(
    rf"(?:try again|retry|resets?|reset)\s+(?:in\s+(?:about\s+|~)?(?P<after>{DURATION_TEXT})|"
    rf"(?:at|on)\s+(?P<at>{_ISO}|{RESET_TEXT}))|resets in ~(?P<approx>{DURATION_TEXT})",
    re.IGNORECASE,
)
# Copilot's own sentences (1.0.102) for the limits of the account, not of a minute.
_LASTING = re.compile(
    r"weekly rate limit|session rate limit|rate limit for this model|hit your rate limit|"
    r"wait for your limit to reset",
    re.IGNORECASE,
)
_LASTING_CODES = {
    "user_weekly_rate_limited": "weekly",
    "user_global_rate_limited": "global",
    "user_model_rate_limited": "model",
}
_QUOTA = re.compile(
    r"quota_exceeded|run out of your included AI credits|additional usage limit|no remaining quota|"
    r"exceeded your (?:monthly )?quota|insufficient_quota",
    re.IGNORECASE,
)
_AUTH = re.compile(
    r"No authentication information found|Authentication failed|"
    r"Personal Access Tokens? .{0,20}not supported|not (?:signed|logged) in|invalid_api_key|Incorrect API key|"
    r"Bad credentials|Unauthorized",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"Model '[^']{1,120}' not found|model_not_found|No supported model available|model is not (?:supported|"
    r"available)|unsupported model|The model `?[^`\s]+`? does not exist",
    re.IGNORECASE,
)
_NETWORK = re.compile(
    r"network fetch failed|fetch failed|error sending request|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|"
    r"Connection (?:refused|reset|failed)|could not be reached|timed out",
    re.IGNORECASE,
)
_OVERLOADED = re.compile(
    r"(?:HTTP |status |^)5\d\d\b|overloaded|Service Unavailable|Bad Gateway|Internal server error", re.IGNORECASE
)
_STATUS = re.compile(r"^(?P<status>[1-5]\d\d)\s|Last error: (?P<last>[1-5]\d\d)\b")


@dataclass(frozen=True, slots=True)
class CopilotError:
    """One error Copilot reported about itself."""

    message: str
    error_type: str = ""  # session.error errorType; "" for a stderr line
    code: str = ""  # errorCode: the service's own code
    status: int | None = None  # the HTTP status of the failed call


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the error means for the loop: a usage limit, or a kind with the message to show."""

    kind: ErrorKind | None
    message: str
    limit: UsageLimit | None = None


_TRANSIENT = {
    **api_says("Copilot's model API"),
    ErrorKind.NETWORK: "the Copilot service (or the custom provider) cannot be reached",
}
_LOGIN = (
    "run `copilot login` (or `gh auth login`), or set COPILOT_GITHUB_TOKEN to a fine-grained token; with a "
    "custom provider, check COPILOT_PROVIDER_API_KEY"
)
_NO_STATUS = "status:none"

# Copilot's failures, in the order they are told apart: the first row that matches names the kind. Its codes are
# "type:<errorType>", "code:<errorCode>", the family of that code ("code:*rate_limited", "code:*quota*") and
# "status:none" when no HTTP status was stated. A rate limit or a spent quota may turn out to be the usage limit.
RULES = (
    Rule(
        ErrorKind.AUTH,
        _AUTH,
        "Copilot cannot authenticate ({said}). Fix: " + _LOGIN,
        statuses=(401, 403),
        codes=("type:authentication", "type:authorization"),
    ),
    Rule(ErrorKind.REFUSED, None, "Copilot refused the request by policy ({said})", codes=("type:policy",)),
    Rule(
        ErrorKind.RATE_LIMITED,
        None,
        _TRANSIENT[ErrorKind.RATE_LIMITED] + ": {said}",
        statuses=(429,),
        codes=("type:rate_limit", "code:*rate_limited"),
    ),
    Rule(
        ErrorKind.BUDGET,
        None,
        "Copilot's session spending limit ran out ({said})",
        codes=("code:session_quota_exceeded",),
    ),
    Rule(
        ErrorKind.BILLING,
        _QUOTA,
        "the Copilot account has no AI credits left ({said}). Fix: raise the budget at "
        "github.com/settings/copilot/features, or wait for the monthly reset",
        statuses=(402,),
        codes=("type:quota", "code:*quota*"),
    ),
    Rule(ErrorKind.BAD_MODEL, _MODEL, UNAVAILABLE_MODEL, model_404=True),
    # the conversation outgrew the model: this attempt failed, a fresh one may not
    Rule(None, None, "", codes=("type:context_limit",)),
    Rule(ErrorKind.OVERLOADED, None, _TRANSIENT[ErrorKind.OVERLOADED] + ": {said}", statuses=range(500, 600)),
    # its words count only when Copilot stated no status: a stated status that is no 5xx outranks them
    Rule(ErrorKind.OVERLOADED, _OVERLOADED, _TRANSIENT[ErrorKind.OVERLOADED] + ": {said}", only=(_NO_STATUS,)),
    Rule(ErrorKind.NETWORK, _NETWORK, _TRANSIENT[ErrorKind.NETWORK] + ": {said}"),
)


def classify(error: CopilotError, now: datetime) -> Verdict | None:
    """The kind of failure Copilot's own `error` states (reset phrases read against `now`); None when it is none
    of these (an ordinary failed attempt: the task's problem, not the service's)."""
    said = one_line(error.message, 300)
    if not said:
        return None
    status = error.status if error.status is not None else stated_status(_STATUS, said)
    found = classify_by(RULES, said, status, codes=_codes(error, status))
    if found is None:
        return None
    limit = _usage_limit(found[0], error.code, said, now)
    if limit is not None:
        return Verdict(ErrorKind.USAGE_LIMIT, f"Copilot's usage limit: {said}", limit)
    return Verdict(*found)


def _codes(error: CopilotError, status: int | None) -> tuple[str, ...]:
    """What Copilot stated besides its message, spelled as RULES' codes."""
    code = error.code
    return (
        f"type:{error.error_type}",
        f"code:{code}",
        *(("code:*rate_limited",) if code.endswith("rate_limited") else ()),
        *(("code:*quota*",) if "quota" in code else ()),
        *((_NO_STATUS,) if status is None else ()),
    )


def _usage_limit(kind: ErrorKind, code: str, said: str, now: datetime) -> UsageLimit | None:
    """The usage limit a rate limit (`kind`) is when it lasts, or a spent quota is when it says when it resets;
    None for any other failure."""
    if kind is ErrorKind.RATE_LIMITED:
        resets_at = reset_in(said, now)
        lasting = _LASTING_CODES.get(code) or ("weekly" if "weekly" in said.lower() else "")
        if not lasting and _LASTING.search(said):
            lasting = "session" if "session" in said.lower() else "global"
        if (resets_at is not None and resets_at - now > SHORT_WAIT) or lasting:
            return UsageLimit("copilot", _limit_message(said), resets_at, lasting, "session_error")
    if kind is ErrorKind.BILLING:
        resets_at = reset_in(said, now)
        if resets_at is not None:
            return UsageLimit("copilot", _limit_message(said), resets_at, "monthly", "session_error")
    return None


def reset_in(said: str, now: datetime) -> datetime | None:
    """The instant a Copilot message says its limit ends ("try again in 2 hours", "resets at …"), or None."""
    found = _RESET.search(said)
    if found is None:
        return None
    after = found["after"] or found["approx"]
    phrase = f"in {after}" if after else found["at"]
    return parse_reset(phrase, now, UTC)  # Copilot runs with TZ=UTC: a clock time without a zone is UTC


def _limit_message(said: str) -> str:
    """The limit as users read it: the service's sentence without the HTTP status Copilot puts first."""
    return clean_message(re.sub(r"^[1-5]\d\d\s+", "", said))
