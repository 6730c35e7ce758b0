"""Why an Amp run failed, from the CLI's own words (never from the agent's): the `error` of a failed `result`
event first, then its "Error: …" line on stderr.

What Amp 0.0.1790142911 says, read in its shipped source and, for the failures before a thread starts, seen from
the real CLI against a loopback HTTP server (tests/fixtures/amp/):
- before a thread starts, on stderr, exit 1: "Invalid or missing API key. Run 'amp login' …" (401), "Access token
  expired …" (403), "Amp server returned an error. Try again in a moment." (5xx), "API request for getUserInfo
  failed: 429", "Couldn't connect to the Amp server at …", "Login failed: …" (no key: it starts a login flow);
- inside a thread, as the `error` of a `result` event with `is_error: true`, **exit 0**: its own error titles and
  advice ("Out of Credits Add credits to keep using Amp.", "No Usage Available Your included Megawatt usage is at
  its monthly limit …", "Unauthorized …", "Model Provider Overloaded Try again in a few seconds.", "Model Stream
  Timed Out …", "Network Error Cannot reach Amp servers …"), or the service's own message ("You've reached your
  free usage limit …", "You've exceeded your usage quota of …", a rate limit's message).
The free tier's limit is the only one worth waiting for: Amp's advice for it is to "wait until the next hour
starts for more free usage". Spent credits or a spent monthly plan are BILLING: no wait lifts them this week.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ralphloop.agents.api_errors import Rule, classify_by, said_and_status, transient_rules
from ralphloop.agents.error_line import error_line
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import ErrorKind
from ralphloop.guards.usage import clean_message
from ralphloop.words.textsafe import one_line

_STATUS = re.compile(r"(?:failed:|status:?)\s*(?P<status>\d{3})\b", re.IGNORECASE)
_AUTH = re.compile(
    r"Invalid or missing API key|Not logged in|Access token expired|Session expired|OAuth session token|"
    r"Login failed|No API key found|Authentication required|\bUnauthorized\b|not authorized to perform",
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"Out of Credits|Low Credit Balance|credit balance is low|No Usage Available|usage is at its monthly limit|"
    r"insufficient-credits|in available credits to start this request|exceeded your usage (?:quota|limit) of",
    re.IGNORECASE,
)
_FREE_LIMIT = re.compile(r"reached your free usage limit", re.IGNORECASE)
_MODE = re.compile(
    r"Model Not Found|Agent mode \"[^\"]*\" is ambiguous|mode has been disabled by your workspace admin|"
    r"Is Not Enabled|--model flag is not enabled",
    re.IGNORECASE,
)
_REFUSED = re.compile(
    r"unknown option|Invalid flag|mutually exclusive|requires --execute mode|is not supported with a remote|"
    r"Do not provide a message argument|not valid UTF-8|User message must be provided",
    re.IGNORECASE,
)
_RATE = re.compile(r"Rate Limit Hit|rate.limit|Too Many Requests", re.IGNORECASE)
_OVERLOADED = re.compile(
    r"Overloaded|Amp server returned an error|Stream Timed Out|Temporarily Unavailable|Internal server error|"
    r"Service Unavailable|Bad Gateway",
    re.IGNORECASE,
)
_NETWORK = re.compile(
    r"Couldn't connect to the Amp server|Cannot reach Amp servers|Network Error|Network timeout|"
    r"WebSocket connection failed|Unable to connect to Amp servers|fetch failed|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|"
    r"ECONNRESET|getaddrinfo|socket hang up",
    re.IGNORECASE,
)
# "The following tools require user approval, which is not supported in stream JSON mode: Bash, edit_file"
_APPROVAL = re.compile(r"requires? user approval, which is not supported in stream JSON mode(?::\s*(?P<tools>.+))?")
# On stderr, exit 1: "Error: The Bash tool tried to run a command that isn't allowlisted. Rerun with …", "… wants to
# modify a guarded file (…)", "… requires user approval (…), but no interactive UI is available", "… is not allowed
# to run in execute mode".
_REFUSED_TOOL = re.compile(
    r"The (?P<tool>\S{1,60}) tool (?:tried to run a command that isn't allowlisted|wants to modify a guarded file|"
    r"requires user approval|is not allowed to run in execute mode)"
)

_TRANSIENT = {
    ErrorKind.NETWORK: "the Amp server cannot be reached",
    ErrorKind.OVERLOADED: "Amp or its model provider is overloaded or failing",
    ErrorKind.RATE_LIMITED: "Amp rate-limited the request (a short rate limit, not a usage limit)",
}
# Amp's failures, in the order they are told apart: the first row that matches names the kind.
RULES = (
    Rule(
        ErrorKind.AUTH,
        _AUTH,
        "Amp cannot authenticate ({said}). Fix: run `amp login`, or set AMP_API_KEY to an access token from "
        "ampcode.com/settings",
        statuses=(401, 403),
    ),
    Rule(ErrorKind.USAGE_LIMIT, _FREE_LIMIT, "{said}"),
    Rule(
        ErrorKind.BILLING,
        _BILLING,
        "the Amp account has no usage left ({said}). Fix: add credits at ampcode.com/pay or change the plan; or run "
        "another agent (an exhausted plan is not worth waiting for)",
        statuses=(402,),
    ),
    Rule(
        ErrorKind.BAD_MODEL,
        _MODE,
        "Amp cannot use that mode ({said}). Fix: choose another with --model or agent.model (Amp's modes: low, "
        "medium, high, ultra, or a plugin mode)",
    ),
    Rule(
        ErrorKind.REFUSED,
        _REFUSED,
        "Amp refused ralph's command line ({said}): this Amp version does not take what ralph passes; install the "
        "version docs/agents.md names",
    ),
    *transient_rules(_TRANSIENT, _RATE, _OVERLOADED, _NETWORK),
)


def classify(said: str) -> tuple[ErrorKind, str] | None:
    """The kind of failure `said` (Amp's own error message) states, with a one-line message carrying the fix;
    None when it is none of these (an ordinary failed attempt: the task's problem, not the service's). The free
    tier's limit is USAGE_LIMIT here; `free_tier_limit` gives its reset."""
    said, status = said_and_status(said, _STATUS)
    return classify_by(RULES, said, status) if said else None


def free_tier_limit(said: str, now: datetime) -> UsageLimit:
    """The free tier's limit as a value: it refills when the next hour starts (Amp's own advice), an instant
    that is the same in every whole-hour time zone."""
    resets = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return UsageLimit("amp", clean_message(said), resets, kind="hourly", source="text")


def approvals_refused(said: str) -> tuple[str, ...]:
    """The tools Amp refused to run because they needed an approval nobody could give in execute mode: from a
    failed `result`'s error, or from its stderr."""
    found = _APPROVAL.search(said)
    if found is not None:
        tools = found["tools"] or ""
        return tuple(one_line(tool, 60) for tool in tools.split(",") if tool.strip()) or ("a tool",)
    return tuple(dict.fromkeys(match["tool"] for match in _REFUSED_TOOL.finditer(said)))


def stderr_error(stderr: str) -> str:
    """The CLI's own error on stderr: the last "Error: …" or "Login failed: …" line (what follows it is advice),
    else the line error_line picks (a crash's first error, else the last words); "" when stderr is empty. Amp
    writes only its own messages there: tools' output goes into the stream."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("Error:", "Login failed:")):
            text = line.removeprefix("Error:").strip()
            return text.removeprefix("error:").strip()  # commander's "Error: error: unknown option '--x'"
    return error_line(stderr)
