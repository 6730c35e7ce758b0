"""Why a `cursor-agent` run failed, from the CLI's own words on stderr (never from the agent's).

Cursor documents no error events: "on failure, the process exits with a non-zero code and … the stream may end
early without a terminal event; the error message is written to stderr" (cursor.com/docs/cli/reference/
output-format). What those messages say is known only from public reports, not from documentation:
- the plan's limit (cursor/cursor#3703, cursor-agent, 2025-10): "Error: You've hit your usage limit" followed by
  lines such as "spendLimitHit: false" and "… Your usage limits will reset when your monthly cycle ends on
  11/17/2025.";
- not logged in (egoist/waku#182, cursor-agent 2026.08.11): "Error: Authentication required. Run `agent login`,
  pass `--api-key`/`--auth-token`, or set `CURSOR_API_KEY`/`CURSOR_AUTH_TOKEN`."
The usage limit is monthly: its reset is weeks away, so waiting for it (the usage-limit policy) would park the
loop for weeks. It is BILLING instead: the run stops at once with the fix (a failover to another agent must act on
BILLING as well as on USAGE_LIMIT to move past it).
"""

from __future__ import annotations

import re

from ralphloop.agents.api_errors import Rule, classify_by, transient_rules
from ralphloop.agents.error_line import error_line
from ralphloop.core.protocols import ErrorKind
from ralphloop.guards.usage import ANSI_ESCAPE
from ralphloop.words.textsafe import one_line

_LIMIT = re.compile(r"You(?:'|’)ve hit your (?:usage|free requests) limit|spendLimitHit:\s*true", re.IGNORECASE)
_CYCLE = re.compile(r"reset when your monthly cycle ends on (?P<date>[0-9/.-]{6,10})", re.IGNORECASE)
_AUTH = re.compile(
    r"Authentication required|Not logged in|\[unauthenticated\]|Invalid API key|invalid.{0,20}token|"
    r"agent login|\bUnauthorized\b",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"Cannot use this model|(?:invalid|unknown|unsupported) model|model .{0,60}(?:not found|not available|does not "
    r"exist)",
    re.IGNORECASE,
)
_REFUSED = re.compile(r"unknown option|unknown argument|too many arguments", re.IGNORECASE)
_RATE = re.compile(r"rate.limit|Too Many Requests|resource.exhausted", re.IGNORECASE)
_OVERLOADED = re.compile(r"overloaded|Internal server error|Service Unavailable|Bad Gateway", re.IGNORECASE)
_NETWORK = re.compile(
    r"ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET|EAI_AGAIN|getaddrinfo|fetch failed|network error|"
    r"socket hang up|Connection (?:refused|reset|error)",
    re.IGNORECASE,
)
_TRANSIENT = {
    ErrorKind.NETWORK: "Cursor's servers cannot be reached",
    ErrorKind.OVERLOADED: "Cursor or its model provider is overloaded or failing",
    ErrorKind.RATE_LIMITED: "Cursor rate-limited the request (a short rate limit, not the plan's usage limit)",
}

# Cursor's failures after its plan's limit, in the order they are told apart: the first row that matches names the
# kind. The whole stderr is matched; the line shows its error alone ({said}).
RULES = (
    Rule(
        ErrorKind.AUTH,
        _AUTH,
        "cursor-agent cannot authenticate ({said}). Fix: run `cursor-agent login`, or set CURSOR_API_KEY",
    ),
    Rule(
        ErrorKind.BAD_MODEL,
        _MODEL,
        "Cursor cannot use that model ({said}). Fix: choose one `cursor-agent --list-models` lists, with --model or "
        "agent.model",
    ),
    Rule(
        ErrorKind.REFUSED,
        _REFUSED,
        "cursor-agent refused ralph's command line ({said}): this version does not take a flag ralph passes",
    ),
    *transient_rules(_TRANSIENT, _RATE, _OVERLOADED, _NETWORK),
)


def classify(stderr: str) -> tuple[ErrorKind, str] | None:
    """The kind of failure Cursor's stderr states, with a one-line message carrying the fix; None when it is
    none of these (an ordinary failed attempt). The whole tail is read: the limit's detail spans several lines."""
    text = ANSI_ESCAPE.sub("", stderr)
    said = first_error(text)
    if not said:
        return None
    if _LIMIT.search(text):
        cycle = _CYCLE.search(text)
        until = f"; it resets when the monthly cycle ends on {cycle['date']}" if cycle else ""
        return ErrorKind.BILLING, (
            f"Cursor's plan has hit its usage limit ({said}{until}), not worth waiting for. Fix: raise the spend "
            "limit or upgrade the plan at cursor.com/dashboard, or run another agent"
        )
    return classify_by(RULES, text, shown=said)


def first_error(stderr: str) -> str:
    """The CLI's error on one line: its last "Error: …" line, else the line error_line picks (a crash's first error,
    else the last words; "" for an empty stderr)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("Error:"):
            return one_line(line.removeprefix("Error:").strip(), 300)
    return one_line(error_line(stderr), 300)
