"""A provider's usage limit in opencode's `error` event, with its reset as an absolute instant.

opencode talks to many providers and relays their HTTP error whole: `error.data` of an `APIError` carries the
`statusCode`, the `message`, the `responseBody` and the `responseHeaders`. A usage limit (the plan or the account
is spent until a reset, as opposed to a per-minute rate limit) is a 429 whose body or message says so
(`usage_limit_reached`, "usage limit", opencode's own `GoUsageLimitError` / `FreeUsageLimitError`), or whose
headers do (Anthropic's `anthropic-ratelimit-unified-status: rejected`), or whose message is a CLI's usage-limit
sentence (agents/limit_text.py). Its reset comes from the headers, read against the response's own `date`:
`anthropic-ratelimit-unified-reset` (unix seconds), `x-ratelimit-reset`, `ratelimit-reset`,
`x-ratelimit-reset-requests` / `-tokens` (a unix time, or a duration such as "20s", "6m0s", or seconds), and
`retry-after` (seconds or an HTTP date); the latest of them, since the limit lifts when all of them have.
`retry-after-ms` is a hint for the next attempt, not a reset, and is not read. OpenAI's plans (the Responses API
behind the `openai` provider) state theirs elsewhere: the body's `error.resets_at` (unix seconds) or
`resets_in_seconds`, and the `x-codex-primary-*` / `x-codex-secondary-*` headers of each window (`reset-at`,
`used-percent`, `window-minutes`), of which only a window at 100% is the limit's (a weekly window at 40% is not).

Pure: no I/O and no clock (the caller passes the instant of the error); no input makes these functions raise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from ralphloop.agents.limit_text import from_text
from ralphloop.core.limits import UsageLimit
from ralphloop.guards.reset_time import aware, epoch_instant, parse_reset
from ralphloop.guards.usage import clean_message

_MARKERS = re.compile(
    r"usage[ _-]?limit|GoUsageLimitError|FreeUsageLimitError|Free usage exceeded|"
    r"(?:quota|limit)\b[^.\n]{0,40}\b(?:will )?resets?\b",
    re.IGNORECASE,
)
_RESET_HEADERS = (
    "anthropic-ratelimit-unified-reset",
    "x-ratelimit-reset",
    "ratelimit-reset",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "retry-after",
)
_SECONDS = re.compile(r"\d{1,8}(?:\.\d{1,6})?")
# A reset further away than this is not one: a typo, or a hostile header.
_FURTHEST = timedelta(days=366)
_BODY_MAX = 64 * 1024  # a longer body is not an error object worth decoding
_CODEX_WINDOWS = ("primary", "secondary")
_KIND_BY_MINUTES = {300: "five_hour", 10080: "weekly"}


def usage_limit(
    status: int | None, message: str, body: str, headers: Mapping[str, Any], at: datetime
) -> UsageLimit | None:
    """The usage limit a provider's HTTP error states, or None when it states none (a rate limit, another error).
    `at` is when opencode reported the error: the reset is read against the response's `date` header, or it."""
    if status != 429:
        return None
    heads = {str(key).lower(): str(value) for key, value in headers.items()}
    base = _date(heads.get("date")) or aware(at)
    sentence = from_text(message, base, UTC) if message else None
    said = _MARKERS.search(message) or _MARKERS.search(body)
    rejected = heads.get("anthropic-ratelimit-unified-status", "").strip().lower() == "rejected"
    if sentence is None and not said and not rejected:
        return None
    window, kind = _used_up_window(heads, base)
    found = [when for when in (reset_from_headers(heads, base), _body_reset(body, base), window) if when]
    resets = max(found) if found else None
    if sentence is not None:
        resets = resets or sentence.resets_at
        return UsageLimit("opencode", sentence.message, resets, kind or sentence.kind, "api_error")
    text = message or "the provider's usage limit was reached"
    return UsageLimit("opencode", clean_message(text), resets, kind, "api_error")


def reset_from_headers(headers: Mapping[str, str], base: datetime) -> datetime | None:
    """The latest reset instant the rate-limit headers give, read against `base` (the response's time)."""
    found = [when for name in _RESET_HEADERS if (when := _instant(headers.get(name, ""), base)) is not None]
    return max(found) if found else None


def _body_reset(body: str, base: datetime) -> datetime | None:
    """The reset an OpenAI error body states: `resets_at` (unix seconds), else `resets_in_seconds` from `base`."""
    if not body.lstrip().startswith("{") or len(body) > _BODY_MAX:
        return None
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = decoded.get("error") if isinstance(decoded, Mapping) else None
    for holder in (error, decoded):
        if not isinstance(holder, Mapping):
            continue
        when = _within(epoch_instant(holder.get("resets_at")), base)
        after = holder.get("resets_in_seconds")
        if when is None and isinstance(after, int | float) and not isinstance(after, bool) and math.isfinite(after):
            when = _within(base + timedelta(seconds=after), base) if 0 <= after < 10**8 else None
        if when is not None:
            return when
    return None


def _used_up_window(headers: Mapping[str, str], base: datetime) -> tuple[datetime | None, str]:
    """The latest reset among the `x-codex-*` windows used up (100%), and that window's kind."""
    latest: tuple[datetime | None, str] = (None, "")
    for window in _CODEX_WINDOWS:
        head = f"x-codex-{window}-"
        used = headers.get(head + "used-percent", "").strip()
        if not _SECONDS.fullmatch(used) or float(used) < 100:
            continue
        when = _within(epoch_instant(headers.get(head + "reset-at", "")), base)
        if when is None:
            continue
        minutes = headers.get(head + "window-minutes", "").strip()
        kind = _KIND_BY_MINUTES.get(int(minutes), "") if minutes.isdecimal() and len(minutes) < 9 else ""
        if latest[0] is None or when > latest[0]:
            latest = (when, kind)
    return latest


def _within(when: datetime | None, base: datetime) -> datetime | None:
    """`when`, unless it is before `base` (less a minute) or absurdly far after it."""
    return when if when is not None and base - timedelta(minutes=1) <= when <= base + _FURTHEST else None


def _instant(value: str, base: datetime) -> datetime | None:
    value = value.strip()
    if not value or len(value) > 64:
        return None
    if _SECONDS.fullmatch(value) and float(value) < 10**8:  # a number of seconds from now
        when: datetime | None = base + timedelta(seconds=float(value))
    else:
        when = _date(value) if "," in value else parse_reset(value, base, UTC)
    return _within(when, base)


def _date(value: str | None) -> datetime | None:
    """An HTTP date ("Fri, 27 Nov 2026 14:50:16 GMT") as aware UTC."""
    if not value:
        return None
    try:
        return aware(parsedate_to_datetime(value)).astimezone(UTC)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
