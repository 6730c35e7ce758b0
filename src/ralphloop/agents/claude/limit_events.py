"""Usage limits from Claude Code's stream-json events: the structured fields first, the sentence second.

The stream states the limit exactly: a `rate_limit_event` with `status: "rejected"` and `resetsAt` in unix
seconds, then synthetic `assistant` / `result` events with `api_error: "usage_limit_reached"`. Older versions
(and 2.1.197, which sets only `error: "rate_limit"`) give just the sentence, read by agents/limit_text.py.

Pure: no I/O and no clock (the caller passes `now`); no input makes `from_claude_event` raise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from ralphloop.agents.limit_text import content_texts, from_text
from ralphloop.core.limits import LimitWarning, UsageLimit, UsageWindow
from ralphloop.guards.reset_time import ERRORS, aware, epoch_instant
from ralphloop.guards.usage import clean_message
from ralphloop.words.windows import label


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
            return _from_assistant(event, aware(now), local)
        if kind == "result":
            return _from_result(event, aware(now), local)
    except ERRORS:
        return None
    return None


def _from_rate_limit_info(info: object) -> UsageLimit | LimitWarning | None:
    if not isinstance(info, Mapping):
        return None
    status = info.get("status")
    resets_at = epoch_instant(info.get("resetsAt"))
    kind = info.get("rateLimitType")
    kind = kind if isinstance(kind, str) else ""
    if status == "rejected":
        message = f"Claude {label(kind) if kind else 'usage'} limit reached"
        if resets_at is not None:
            message += f" · resets {resets_at:%Y-%m-%d %H:%M} UTC"
        return UsageLimit("claude", message, resets_at, kind, "rate_limit_event")
    if status == "allowed":  # 2.1.329 keeps the summary "allowed" and warns in the window's own status
        warned = windows_of({"type": "rate_limit_event", "rate_limit_info": info})
        flagged = _warned_windows(info)
        near = max((w for w in warned if w.name in flagged), key=lambda w: w.utilization, default=None)
        return LimitWarning(near.utilization, near.resets_at, near.name) if near is not None else None
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


def windows_of(event: Mapping[str, Any]) -> tuple[UsageWindow, ...]:
    """The usage windows a `rate_limit_event` reports, each with its share and reset: every entry of its
    `unifiedWindows`, and the window `rateLimitType` names when that list leaves it out. A window refused (`status:
    rejected`) with no share stated is used up. () for any other event, or fields of the wrong kind."""
    info = event.get("rate_limit_info") if event.get("type") == "rate_limit_event" else None
    if not isinstance(info, Mapping):
        return ()
    found: dict[str, UsageWindow] = {}
    named = info.get("rateLimitType")
    if isinstance(named, str) and named:
        window = _window(named, info)
        if window is not None:
            found[named] = window
    listed = info.get("unifiedWindows")
    for name, fields in listed.items() if isinstance(listed, Mapping) else ():
        window = _window(name, fields) if isinstance(name, str) and name and isinstance(fields, Mapping) else None
        if window is not None:
            found[name] = window  # the list's own figures win over the event's summary
    return tuple(found[name] for name in sorted(found))


def _warned_windows(info: Mapping[str, Any]) -> set[str]:
    """The windows of `unifiedWindows` whose own status is `allowed_warning` (near their limit)."""
    listed = info.get("unifiedWindows")
    if not isinstance(listed, Mapping):
        return set()
    return {
        name
        for name, fields in listed.items()
        if isinstance(name, str) and isinstance(fields, Mapping) and fields.get("status") == "allowed_warning"
    }


def _window(name: str, fields: Mapping[str, Any]) -> UsageWindow | None:
    share = _fraction(fields.get("utilization"))
    if share is None and fields.get("status") == "rejected":
        share = 1.0
    try:
        resets_at = epoch_instant(fields.get("resetsAt"))
    except ERRORS:
        resets_at = None
    return UsageWindow(name[:64], share, resets_at) if share is not None else None


def _from_assistant(event: Mapping[str, Any], now: datetime, local: tzinfo) -> UsageLimit | None:
    usage_limit = event.get("api_error") == "usage_limit_reached"
    if not (usage_limit or event.get("error") or event.get("is_api_error_message") is True):
        return None  # an ordinary reply: the agent's own words, whatever they say
    message = event.get("message")
    text = "\n".join(content_texts(message)) if isinstance(message, Mapping) else ""
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
        message, resets_at, kind = clean_message(first) or "Claude usage limit reached", None, ""
    if structured is not None:  # the exact instant and window beat the minute printed in the text
        resets_at = structured.resets_at or resets_at
        kind = structured.kind or kind
    return UsageLimit("claude", message, resets_at, kind, "api_error")


def _fraction(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return min(max(number, 0.0), 1.0)
