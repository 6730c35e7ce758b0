"""When a usage limit resets, from the phrase an agent CLI printed: "8pm (America/New_York)", "Nov 22, 8pm",
"Nov 21st, 2026 1:04 AM", "1763766000", "in 2 days 3 hours", an ISO 8601 timestamp.

The CLIs print the reset in the agent process's time zone (`TZ`), to the minute, and without a date when it is
less than a day away (Codex: when it falls on the same day). So `parse_reset` uses the zone named in the text,
else `local` (the zone the agent ran with); a bare clock time is its next occurrence after `now` (a few minutes of
grace, since the printed minute is truncated), a month/day without a year the nearest such date not in the past.
Every datetime returned is aware UTC. Vendor-neutral; the sentences around these phrases are read by the agents.

Pure: no I/O and no clock (the caller passes `now`), stdlib only; no input makes these functions raise.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo

# A clock time this little in the past still means today: the CLIs print the reset truncated to the minute.
CLOCK_GRACE = timedelta(minutes=5)
# A month/day this little in the past still means this year's date.
DATE_GRACE = timedelta(days=1)

ERRORS = (ValueError, ArithmeticError, OSError)  # bad dates, out-of-range instants, platform limits

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_TEXT = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
_DATE_TEXT = rf"{_MONTH_TEXT}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\s*,?\s+(?:at\s+)?"
_TIME_TEXT = r"\d{1,2}(?::\d{2})?\s*[AaPp]\.?[Mm]\.?(?![A-Za-z])|\d{1,2}:\d{2}(?!\d)"
_ZONE_TEXT = r"\s*\([^()\n]{1,64}\)|\s+(?:UTC|GMT)(?![A-Za-z])"
# A reset phrase inside a sentence (no groups: the match is handed to parse_reset).
RESET_TEXT = rf"(?:{_DATE_TEXT})?(?:{_TIME_TEXT})(?:{_ZONE_TEXT})?"

# Pattern texts, compiled by `re` at their first use (its cache keeps them): only a usage limit needs them.
_RESET_FULL = (
    r"(?i)(?:(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?\s*,?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<zone>[^()]{1,64})\)|\s+(?P<utc>UTC|GMT|Z))?"
)
_AT = r"(?i)^at\s+"
_EPOCH = r"\d{9,13}"
_ISO = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?"

_UNIT = r"(?:milliseconds?|ms|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![A-Za-z])"
# A duration inside a sentence ("19h14m47s", "2 days and 3 hours"), for `parse_reset("in " + ...)`.
DURATION_TEXT = rf"\d{{1,7}}(?:\.\d{{1,9}})?\s*{_UNIT}(?:[\s,]*(?:and\s+)?\d{{1,7}}(?:\.\d{{1,9}})?\s*{_UNIT}){{0,6}}"
_DURATION_FULL = rf"(?i)(?:in\s+)?(?P<d>{DURATION_TEXT})"
_DURATION_PART = rf"(?i)(?P<n>\d{{1,7}}(?:\.\d{{1,9}})?)\s*(?P<unit>{_UNIT})"


def parse_reset(phrase: str, now: datetime, local: tzinfo) -> datetime | None:
    """The reset instant a CLI printed, as aware UTC; None when the phrase is not a time.

    Takes "8pm (America/New_York)", "Nov 22, 8pm (America/New_York)", "3pm" (no zone: `local`), "8:30pm",
    "1am (UTC)", "Nov 21st, 2026 1:04 AM", "1:04 AM", "17:00", a unix epoch "1763766000" (or milliseconds),
    an ISO 8601 timestamp, or a duration from `now` ("in 2 days 3 hours", "19h14m47s").
    A time without a date is its next occurrence after `now` in that zone (the CLIs leave the date out when the
    reset is less than a day away), where up to CLOCK_GRACE ago still counts as today (the printed minute is
    truncated); a month/day without a year is the nearest such date not in the past by more than DATE_GRACE.
    An unknown zone name falls back to `local`. A naive `now` is taken as UTC.
    """
    if not isinstance(phrase, str):
        return None
    text = re.sub(_AT, "", " ".join(phrase.split()).strip(" .;"))
    if not text or len(text) > 120:
        return None
    try:
        return _parse_reset(text, aware(now), local)
    except ERRORS:
        return None


def epoch_instant(value: object) -> datetime | None:
    """A unix time in seconds or milliseconds (a number, or a string of digits) as aware UTC; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(_EPOCH, value.strip()):
        value = int(value.strip())
    if not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
        if seconds >= 10**11:
            seconds /= 1000  # milliseconds
        return datetime.fromtimestamp(seconds, UTC)
    except ERRORS:
        return None


def aware(now: datetime) -> datetime:
    """`now`, taken as UTC when it is naive."""
    if now.tzinfo is None or now.utcoffset() is None:
        return now.replace(tzinfo=UTC)
    return now


def _parse_reset(text: str, now: datetime, local: tzinfo) -> datetime | None:
    if re.fullmatch(_EPOCH, text):
        seconds = int(text)
        return datetime.fromtimestamp(seconds / 1000 if seconds >= 10**11 else seconds, UTC)
    if re.fullmatch(_ISO, text):
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=local)).astimezone(UTC)
    duration = re.fullmatch(_DURATION_FULL, text)
    if duration:
        span = _parse_duration(duration["d"])
        return None if span is None else (now + span).astimezone(UTC)
    match = re.fullmatch(_RESET_FULL, text)
    if not match:
        return None
    hour = int(match["hour"])
    minute = int(match["minute"] or 0)
    ampm = (match["ampm"] or "").lower()
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.startswith("p") else 0)
    elif match["minute"] is None or hour > 23:
        return None  # a bare number is not a clock time
    if minute > 59:
        return None
    zone = _zone(match["zone"], local) if match["zone"] else UTC if match["utc"] else local
    clock = time(hour, minute)
    if match["mon"]:
        month = _month(match["mon"])
        if month is None:
            return None
        day = int(match["day"])
        if match["year"]:
            return datetime.combine(date(int(match["year"]), month, day), clock, zone).astimezone(UTC)
        return _nearest_date(month, day, clock, zone, now)
    today = now.astimezone(zone).date()
    candidate = datetime.combine(today, clock, zone)
    if candidate + CLOCK_GRACE < now:
        candidate = datetime.combine(today + timedelta(days=1), clock, zone)
    return candidate.astimezone(UTC)


def _nearest_date(month: int, day: int, clock: time, zone: tzinfo, now: datetime) -> datetime | None:
    year = now.astimezone(zone).year
    for candidate_year in (year - 1, year, year + 1, year + 2, year + 3, year + 4):
        try:
            candidate = datetime.combine(date(candidate_year, month, day), clock, zone)
        except ValueError:
            continue  # Feb 29 in a common year, or Apr 31
        if candidate + DATE_GRACE >= now:
            return candidate.astimezone(UTC)
    return None


def _month(name: str) -> int | None:
    word = name.lower()
    if word[:3] not in _MONTHS:
        return None
    index = _MONTHS.index(word[:3])
    return index + 1 if _MONTH_NAMES[index].startswith(word) else None


def _zone(name: str, local: tzinfo) -> tzinfo:
    key = name.strip()
    if key.upper() in {"UTC", "GMT", "Z", "ETC/UTC"}:
        return UTC
    if not key:
        return local
    from zoneinfo import ZoneInfo  # ~2 ms of import, for the rare reset time given with a named zone

    try:
        return ZoneInfo(key)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError; bad keys raise ValueError
        return local


def _parse_duration(text: str) -> timedelta | None:
    total = 0.0
    for part in re.finditer(_DURATION_PART, text):
        total += float(part["n"]) * _unit_seconds(part["unit"])
    return timedelta(seconds=total) if math.isfinite(total) else None


def _unit_seconds(unit: str) -> float:
    word = unit.lower()
    if word == "ms" or word.startswith("milli"):
        return 0.001
    return {"d": 86400.0, "h": 3600.0, "m": 60.0}.get(word[0], 1.0)
