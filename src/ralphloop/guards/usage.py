"""Vendor usage limits: tell "the subscription ran out until T" apart from "the task failed".

A subscription agent that hits its 5-hour, weekly or daily limit exits (non-zero, or for one older Claude Code
even 0) with a one-line sentence, and every further iteration fails the same way until the limit resets. The loop
must not count that as a failed iteration, trip its circuit breaker or burn its retries on it: it should pause
until the reset. This module turns what the agent CLIs print into a `UsageLimit` carrying that reset instant.

Structured fields first, text second. Claude Code's stream-json states the limit exactly: a `rate_limit_event`
with `status: "rejected"` and `resetsAt` in unix seconds, then synthetic `assistant` / `result` events with
`api_error: "usage_limit_reached"` (`from_claude_event`). Everything else (Codex, Gemini, Claude's text and json
output, older Claude versions) only gives a sentence, which `from_text` matches on the CLIs' exact sentence
shapes, anchored at the start of a line or right after an "Error:"-like prefix, so that prose or code that merely
talks about limits ("I added a usage limit reached message") never matches. JSON lines are decoded first and only
their error-carrying fields are read, so an agent's own reply text inside a JSON event is never taken for a limit.

The reset time in those sentences is printed in the agent process's time zone (`TZ`), to the minute, and without a
date when it is less than a day away (Codex: when it falls on the same day). So `parse_reset` uses the zone named
in the text, else `local` (the zone the agent ran with); a bare clock time is its next occurrence after `now` (a
few minutes of grace, since the printed minute is truncated), a month/day without a year the nearest such date
not in the past. Every datetime returned is aware UTC.

Pure: no I/O and no clock (the caller passes `now`), stdlib only; no input makes these functions raise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

MESSAGE_MAX = 300
_SENTENCE_MAX = 500  # how far past its start a sentence (Codex's plan advice, then "try again at ...") may run
# A clock time this little in the past still means today: the CLIs print the reset truncated to the minute.
CLOCK_GRACE = timedelta(minutes=5)
# A month/day this little in the past still means this year's date.
DATE_GRACE = timedelta(days=1)

_ERRORS = (ValueError, ArithmeticError, OSError)  # bad dates, out-of-range instants, platform limits


@dataclass(frozen=True, slots=True)
class UsageLimit:
    """A vendor usage limit the agent hit (not a failure of the task)."""

    vendor: str  # "claude" | "codex" | "gemini" | "unknown"
    message: str  # one clean line for users (the CLI's own sentence, <= 300 chars)
    resets_at: datetime | None  # timezone-aware UTC; None when the vendor gave no reset time
    kind: str = ""  # five_hour | seven_day | seven_day_opus | session | weekly | opus | sonnet | daily | ""
    source: str = ""  # "rate_limit_event" | "api_error" | "text"


@dataclass(frozen=True, slots=True)
class LimitWarning:
    """Near the limit (Claude rate_limit_event status allowed_warning)."""

    utilization: float  # 0..1
    resets_at: datetime | None
    kind: str = ""


# ---------------------------------------------------------------------------------------------------------------
# Reset phrases: "8pm (America/New_York)", "Nov 22, 8pm (UTC)", "Nov 21st, 2026 1:04 AM", "1763766000", ...

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
_RESET_TEXT = rf"(?:{_DATE_TEXT})?(?:{_TIME_TEXT})(?:{_ZONE_TEXT})?"

_RESET_FULL = re.compile(
    r"(?:(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?\s*,?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<zone>[^()]{1,64})\)|\s+(?P<utc>UTC|GMT|Z))?",
    re.IGNORECASE,
)
_AT = re.compile(r"^at\s+", re.IGNORECASE)
_EPOCH = re.compile(r"\d{9,13}")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?")

_UNIT = r"(?:milliseconds?|ms|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![A-Za-z])"
_DURATION_TEXT = rf"\d{{1,7}}(?:\.\d{{1,9}})?\s*{_UNIT}(?:[\s,]*(?:and\s+)?\d{{1,7}}(?:\.\d{{1,9}})?\s*{_UNIT}){{0,6}}"
_DURATION_FULL = re.compile(rf"(?:in\s+)?(?P<d>{_DURATION_TEXT})", re.IGNORECASE)
_DURATION_PART = re.compile(rf"(?P<n>\d{{1,7}}(?:\.\d{{1,9}})?)\s*(?P<unit>{_UNIT})", re.IGNORECASE)


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
    text = _AT.sub("", " ".join(phrase.split()).strip(" .;"))
    if not text or len(text) > 120:
        return None
    try:
        return _parse_reset(text, _aware(now), local)
    except _ERRORS:
        return None


def _parse_reset(text: str, now: datetime, local: tzinfo) -> datetime | None:
    if _EPOCH.fullmatch(text):
        seconds = int(text)
        return datetime.fromtimestamp(seconds / 1000 if seconds >= 10**11 else seconds, UTC)
    if _ISO.fullmatch(text):
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=local)).astimezone(UTC)
    duration = _DURATION_FULL.fullmatch(text)
    if duration:
        span = _parse_duration(duration["d"])
        return None if span is None else (now + span).astimezone(UTC)
    match = _RESET_FULL.fullmatch(text)
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
    try:
        return ZoneInfo(key)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError; bad keys raise ValueError
        return local


def _parse_duration(text: str) -> timedelta | None:
    total = 0.0
    for part in _DURATION_PART.finditer(text):
        total += float(part["n"]) * _unit_seconds(part["unit"])
    return timedelta(seconds=total) if math.isfinite(total) else None


def _unit_seconds(unit: str) -> float:
    word = unit.lower()
    if word == "ms" or word.startswith("milli"):
        return 0.001
    return {"d": 86400.0, "h": 3600.0, "m": 60.0}.get(word[0], 1.0)


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        return now.replace(tzinfo=UTC)
    return now


# ---------------------------------------------------------------------------------------------------------------
# Sentences. Each pattern is one CLI's exact shape; a match counts only where `_anchored` says the sentence starts.

_APOS = "['’‘ʼ`]"
_CLAUDE_NAMES = (
    r"(?i:5-hour|five-hour|session|weekly opus|weekly sonnet|opus weekly|sonnet weekly|weekly|daily|opus|sonnet|usage)"
)
_SEP = r"\s*[·∙•]\s*"

# Claude Code 2.x: "You've hit your 5-hour limit · resets 8pm (America/New_York)"; "You've hit your limit · ...".
_CLAUDE_HIT = re.compile(rf"You{_APOS}ve hit your (?:(?P<name>{_CLAUDE_NAMES})\s+)?limit(?=\s*(?:[·∙•]|\.?\s*$))")
_CLAUDE_HIT_RESETS = re.compile(rf"{_SEP}resets(?:\s+at)?\s+(?P<reset>{_RESET_TEXT})")
# Older Claude Code UI: "5-hour limit reached ∙ resets 3pm", "Weekly limit reached ∙ resets 5am".
_CLAUDE_REACHED = re.compile(
    rf"(?P<name>{_CLAUDE_NAMES}) limit reached{_SEP}resets(?:\s+at)?\s+(?P<reset>{_RESET_TEXT})"
)
# Claude Code 1.0.x: "Claude AI usage limit reached|1755615600" and its human form.
_CLAUDE_EPOCH = re.compile(r"Claude AI usage limit reached\s*\|\s*(?P<reset>\d{9,13})")
_CLAUDE_WILL_RESET = re.compile(
    rf"Claude usage limit reached\.\s*Your limit will reset at\s+(?P<reset>{_RESET_TEXT})\.?"
)
# Codex: "You’ve hit your usage limit. <plan advice> or try again at Nov 21st, 2026 1:04 AM." (Try again later.)
_CODEX = re.compile(rf"You{_APOS}ve hit your usage limit(?: for [^\n]{{1,80}}?)?\.")
_CODEX_AGAIN = re.compile(rf"[Tt]ry again (?:at\s+(?P<reset>{_RESET_TEXT})|in\s+(?P<after>{_DURATION_TEXT})|later)\.?")
# Gemini: "You have exhausted your daily quota on this model." (no reset time), and the Code Assist form
# "You have exhausted your capacity on this model. Your quota will reset after 19h14m47s."
_GEMINI_DAILY = re.compile(r"You have exhausted your daily quota on this model\.?")
_GEMINI_CAPACITY = re.compile(
    r"You have exhausted your capacity on this model\.?"
    rf"(?:\s*Your quota will reset after\s+(?P<after>{_DURATION_TEXT})\.?)?"
)

_KEYWORDS = re.compile(r"hit your|limit reached|exhausted your", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# What may stand right before a sentence on its line: nothing, a TUI bullet or a log prefix, or "...Error:".
_ANCHOR_CHARS = frozenset("⎿■●•│✕⚠❌⏺[]")
_ANCHOR_LABEL = re.compile(r"(?:error|failed|failure|content|exception|warning|warn)\s*:$", re.IGNORECASE)

_KIND_BY_NAME = {
    "5-hour": "five_hour",
    "five-hour": "five_hour",
    "session": "session",
    "weekly": "weekly",
    "daily": "daily",
    "opus": "opus",
    "weekly opus": "opus",
    "opus weekly": "opus",
    "sonnet": "sonnet",
    "weekly sonnet": "sonnet",
    "sonnet weekly": "sonnet",
    "usage": "",
}


def from_text(text: str, now: datetime, local: tzinfo) -> UsageLimit | None:
    """The usage limit an agent CLI's output reports, or None. The last limit sentence in the text wins.

    `text` may be a whole stdout or stderr tail: plain lines, JSON lines (decoded; only their error fields are
    read: `message`, `error`, `error.message`, Claude's `result` when `is_error`), or JSON cut off mid-line.
    Reset times are resolved by `parse_reset` against `now` and `local`.
    """
    if not isinstance(text, str) or not _KEYWORDS.search(text):
        return None
    found: UsageLimit | None = None
    for line in _candidate_lines(text):
        if _KEYWORDS.search(line):
            hit = _match_line(line, now, local)
            if hit is not None:
                found = hit
    return found


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int  # where the sentence starts on its line
    vendor: str
    sentence: str
    reset: str | None = None  # a phrase for parse_reset
    after: str | None = None  # a duration from now
    kind: str = ""

    def limit(self, now: datetime, local: tzinfo) -> UsageLimit:
        if self.reset is not None:
            resets_at = parse_reset(self.reset, now, local)
        elif self.after is not None:
            resets_at = parse_reset("in " + self.after, now, local)
        else:
            resets_at = None
        return UsageLimit(self.vendor, _clean(self.sentence), resets_at, self.kind, "text")


def _match_line(line: str, now: datetime, local: tzinfo) -> UsageLimit | None:
    """The last anchored limit sentence on one line; at the same start, the first pattern listed wins."""
    best: _Hit | None = None
    for hit in _line_hits(line):
        if (best is None or hit.start > best.start) and _anchored(line, hit.start):
            best = hit
    return None if best is None else best.limit(now, local)


def _line_hits(line: str) -> Iterator[_Hit]:
    for m in _CODEX.finditer(line):
        again = _CODEX_AGAIN.search(line, m.end(), m.end() + _SENTENCE_MAX)
        end = again.end() if again else min(len(line), m.end() + _SENTENCE_MAX)
        reset, after = (again["reset"], again["after"]) if again else (None, None)
        yield _Hit(m.start(), "codex", line[m.start() : end], reset, after)
    for m in _GEMINI_DAILY.finditer(line):
        yield _Hit(m.start(), "gemini", m[0], kind="daily")
    for m in _GEMINI_CAPACITY.finditer(line):
        yield _Hit(m.start(), "gemini", m[0], after=m["after"])
    for m in _CLAUDE_HIT.finditer(line):
        resets = _CLAUDE_HIT_RESETS.match(line, m.end())
        end, reset = (resets.end(), resets["reset"]) if resets else (m.end(), None)
        yield _Hit(m.start(), "claude", line[m.start() : end], reset, kind=_kind(m["name"]))
    for m in _CLAUDE_REACHED.finditer(line):
        yield _Hit(m.start(), "claude", m[0], m["reset"], kind=_kind(m["name"]))
    for m in _CLAUDE_EPOCH.finditer(line):
        yield _Hit(m.start(), "claude", "Claude AI usage limit reached", m["reset"])
    for m in _CLAUDE_WILL_RESET.finditer(line):
        yield _Hit(m.start(), "claude", m[0], m["reset"])


def _kind(name: str | None) -> str:
    return _KIND_BY_NAME.get(" ".join((name or "usage").lower().split()), "")


def _anchored(line: str, start: int) -> bool:
    before = line[max(0, start - 80) : start].rstrip()
    if not before:
        return not line[:start].strip()
    return before[-1] in _ANCHOR_CHARS or _ANCHOR_LABEL.search(before) is not None


def _clean(text: str) -> str:
    flat = " ".join(_CONTROL.sub(" ", _ANSI.sub("", text)).split())
    return flat if len(flat) <= MESSAGE_MAX else flat[: MESSAGE_MAX - 1].rstrip() + "…"


# ---------------------------------------------------------------------------------------------------------------
# Where sentences may sit in an output: plain lines, or the error fields of JSON events.

_DECODER = json.JSONDecoder()
_JSON_FIELD = re.compile(r'"(?P<key>message|error|result)"\s*:\s*(?P<value>"(?:[^"\\\n]|\\.){0,4000}")')
_IS_ERROR = re.compile(r'"is_error"\s*:\s*true')


def _candidate_lines(text: str) -> Iterator[str]:
    for raw in text.splitlines():
        line = _ANSI.sub("", raw)
        if not _KEYWORDS.search(line):
            continue
        brace = line.find("{")
        try:
            obj, end = _DECODER.raw_decode(line, brace) if brace >= 0 else (None, 0)
        except (ValueError, RecursionError):
            obj, end = None, 0
        if isinstance(obj, dict):
            yield line[:brace]
            for value in _event_texts(obj, depth=0):
                yield from value.splitlines()
            yield line[end:]
            continue
        yield line
        # JSON cut off (a tail that starts or ends mid-event) or pretty-printed over several lines.
        is_error = _IS_ERROR.search(line) is not None
        for field in _JSON_FIELD.finditer(line):
            if field["key"] == "result" and not is_error:
                continue
            try:
                value = json.loads(field["value"])
            except (ValueError, RecursionError):
                continue
            if isinstance(value, str):
                yield from value.splitlines()


def _event_texts(event: Mapping[str, Any], depth: int) -> list[str]:
    """The error-carrying strings of one decoded JSON event (never the agent's own reply text)."""
    texts: list[str] = []
    if depth > 2:
        return texts
    message = event.get("message")
    if isinstance(message, str):
        texts.append(message)  # codex {"type":"error","message":...}
    error = event.get("error")
    if isinstance(error, str):
        texts.append(error)
    elif isinstance(error, Mapping):
        texts.extend(_error_texts(error))
    errors = event.get("errors")
    if isinstance(errors, list):
        texts.extend(item for item in errors if isinstance(item, str))
    result = event.get("result")
    if event.get("is_error") is True and isinstance(result, str):
        texts.append(result)  # Claude result event of a failed run
    if error and isinstance(message, Mapping):
        texts.extend(_content_texts(message))  # Claude synthetic assistant event carrying an error
    item = event.get("item")
    if isinstance(item, Mapping) and item.get("type") == "error" and isinstance(item.get("message"), str):
        texts.append(item["message"])  # codex item.completed of type error
    payload = event.get("payload")
    if isinstance(payload, Mapping):
        texts.extend(_event_texts(payload, depth + 1))  # codex session file (rollout) event_msg
    return texts


def _error_texts(error: Mapping[str, Any]) -> list[str]:
    texts: list[str] = []
    for holder in (error, error.get("data"), error.get("error")):
        if isinstance(holder, Mapping) and isinstance(holder.get("message"), str):
            texts.append(holder["message"])
    return texts


def _content_texts(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [block["text"] for block in content if isinstance(block, Mapping) and isinstance(block.get("text"), str)]


# ---------------------------------------------------------------------------------------------------------------
# Claude Code stream-json events: the structured fields.

_RATE_LIMIT_LABELS = {
    "five_hour": "5-hour",
    "seven_day": "weekly",
    "seven_day_opus": "weekly Opus",
    "seven_day_sonnet": "weekly Sonnet",
}


def from_claude_event(event: Mapping[str, Any], now: datetime, local: tzinfo) -> UsageLimit | LimitWarning | None:
    """What one parsed Claude Code stream-json event says about usage limits; None for anything else.

    `rate_limit_event` rejected -> UsageLimit (source "rate_limit_event", exact `resetsAt`, kind `rateLimitType`);
    allowed_warning -> LimitWarning; allowed -> None. A synthetic `assistant` event or an `is_error` `result` event
    with `api_error: "usage_limit_reached"`, or whose text is a limit sentence -> UsageLimit (source "api_error"),
    the reset from the event's `api_error_params.rate_limit_info` when given, else from the text.
    Malformed events (wrong types, missing keys) give None.
    """
    if not isinstance(event, Mapping):
        return None
    try:
        kind = event.get("type")
        if kind == "rate_limit_event":
            return _from_rate_limit_info(event.get("rate_limit_info"))
        if kind == "assistant":
            return _from_assistant(event, _aware(now), local)
        if kind == "result":
            return _from_result(event, _aware(now), local)
    except _ERRORS:
        return None
    return None


def _from_rate_limit_info(info: object) -> UsageLimit | LimitWarning | None:
    if not isinstance(info, Mapping):
        return None
    status = info.get("status")
    resets_at = _epoch(info.get("resetsAt"))
    kind = info.get("rateLimitType")
    kind = kind if isinstance(kind, str) else ""
    if status == "rejected":
        label = _RATE_LIMIT_LABELS.get(kind, "usage")
        message = f"Claude {label} limit reached"
        if resets_at is not None:
            message += f" · resets {resets_at:%Y-%m-%d %H:%M} UTC"
        return UsageLimit("claude", message, resets_at, kind, "rate_limit_event")
    if status == "allowed_warning":
        utilization = _fraction(info.get("utilization"))
        if utilization is None:
            windows = info.get("unifiedWindows")
            window = windows.get(kind) if isinstance(windows, Mapping) else None
            utilization = _fraction(window.get("utilization")) if isinstance(window, Mapping) else None
        if utilization is None:
            return None
        return LimitWarning(utilization, resets_at, kind)
    return None


def _from_assistant(event: Mapping[str, Any], now: datetime, local: tzinfo) -> UsageLimit | None:
    usage_limit = event.get("api_error") == "usage_limit_reached"
    if not (usage_limit or event.get("error") or event.get("is_api_error_message") is True):
        return None  # an ordinary reply: the agent's own words, whatever they say
    message = event.get("message")
    text = "\n".join(_content_texts(message)) if isinstance(message, Mapping) else ""
    hit = from_text(text, now, local)
    if usage_limit:
        params = event.get("api_error_params")
        info = params.get("rate_limit_info") if isinstance(params, Mapping) else None
        structured = _from_rate_limit_info(info)
        return _api_error_limit(text, hit, structured if isinstance(structured, UsageLimit) else None)
    if hit is not None:
        return _api_error_limit(text, hit, None)  # Claude Code 2.1.197 sets only error: "rate_limit"
    return None


def _from_result(event: Mapping[str, Any], now: datetime, local: tzinfo) -> UsageLimit | None:
    if event.get("is_error") is not True:
        return None
    result = event.get("result")
    text = result if isinstance(result, str) else ""
    hit = from_text(text, now, local)
    if hit is not None or event.get("api_error") == "usage_limit_reached":
        return _api_error_limit(text, hit, None)
    return None


def _api_error_limit(text: str, hit: UsageLimit | None, structured: UsageLimit | None) -> UsageLimit:
    if hit is not None:
        message, resets_at, kind = hit.message, hit.resets_at, hit.kind
    else:
        first = next((line for line in text.splitlines() if line.strip()), "")
        message, resets_at, kind = _clean(first) or "Claude usage limit reached", None, ""
    if structured is not None:  # the exact instant and window beat the minute printed in the text
        resets_at = structured.resets_at or resets_at
        kind = structured.kind or kind
    return UsageLimit("claude", message, resets_at, kind, "api_error")


def _epoch(value: object) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and _EPOCH.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
        if seconds >= 10**11:
            seconds /= 1000  # milliseconds
        return datetime.fromtimestamp(seconds, UTC)
    except _ERRORS:
        return None


def _fraction(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return min(max(number, 0.0), 1.0)
