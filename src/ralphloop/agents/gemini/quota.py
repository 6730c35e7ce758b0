"""Gemini's quota errors read as the usage limit, with the reset as an absolute instant.

Gemini CLI 0.61.0 sorts a 429 itself (its `classifyGoogleError`) and retries what it deems short; what reaches
ralph is the error it gave up on, in the `result` event's message:
- "You have exhausted your daily quota on this model." (a `QuotaFailure` whose quota id is per day): no reset
  time is given, so the limit has none (ralph waits `usage_limit.fallback_wait_minutes`, or exits under `exit`);
- "You have exhausted your capacity on this model. Your quota will reset after 15h57m40s." (the Code Assist
  backend of a Google login): the reset is that long after the error;
- the API's own message ending "Please retry in 3600.0s." (and the CLI's "Suggested retry after 3600s."): the CLI
  retries a delay of up to 300 s itself and treats a longer one as terminal; ralph does the same: longer is the
  usage limit, reset that long after the error; up to 300 s is a short rate limit (errors.py), retried after a
  backoff.
A relative reset is counted from the `result` event's own timestamp (when the CLI stated it), else from the end
of the run. The sentences are read only in the CLI's error message, never in the agent's text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ralphloop.agents.limit_text import from_text
from ralphloop.core.limits import UsageLimit
from ralphloop.guards.reset_time import DURATION_TEXT, parse_reset
from ralphloop.guards.usage import clean_message

TERMINAL_DELAY_S = 300  # the CLI's own MAX_RETRYABLE_DELAY_SECONDS: longer waits are not retried
_RETRY = re.compile(rf"(?:Please retry in|Suggested retry after)\s+(?P<after>{DURATION_TEXT})", re.IGNORECASE)
_QUOTA = re.compile(r"exceeded your current quota|RESOURCE_EXHAUSTED|Resource has been exhausted|quota", re.I)


def usage_limit(said: str, status: int | None, at: datetime) -> UsageLimit | None:
    """The usage limit Gemini's error message `said` states (HTTP `status` when known), reset counted from `at`."""
    if not said:
        return None
    found = from_text(said, at, UTC)
    if found is not None:
        return found
    if status not in (429, None) or not _QUOTA.search(said):
        return None
    longest: datetime | None = None
    for match in _RETRY.finditer(said):
        resets = parse_reset("in " + match["after"], at, UTC)
        if resets is not None and (longest is None or resets > longest):
            longest = resets
    if longest is None or longest - at <= timedelta(seconds=TERMINAL_DELAY_S):
        return None
    return UsageLimit("gemini", clean_message(_first_line(said)), longest, "", "api_error")


def _first_line(said: str) -> str:
    """The error's own words: "[API Error: You exceeded your current quota, …" up to its first line's end."""
    return next((line for line in said.splitlines() if line.strip()), said)


def stated_at(timestamp: object, fallback: datetime) -> datetime:
    """When the CLI stated its error: the event's ISO timestamp ("2026-11-20T23:08:13.915Z"), else `fallback`."""
    if isinstance(timestamp, str) and len(timestamp) <= 40:
        try:
            when = datetime.fromisoformat(timestamp)
        except ValueError:
            return fallback
        return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return fallback
