"""Flags the seeds give different meanings: never read one meaning silently where a user meant the other.

Seed 002's `ralph.sh` has `-t SECS` and `-r STORY`; seed 003 (and ralph) has `-t MINUTES` and `-r CALLS_PER_HOUR`.
ralph keeps seed 003's meaning and refuses a value that only makes sense in seed 002's, with the fix; the long
forms (`--timeout`, `--rate-limit`, `--resume-from`) say what they mean and are taken as written.
"""

from __future__ import annotations

import math

from ralphloop.words.patterns import lazy

# A per-iteration timeout in minutes past this is almost surely seconds typed the seed-002 way (`-t 1800`).
BARE_MINUTES_MAX = 240
_STORY_ID = lazy(r"\d+(?:\.\d+)+|[A-Za-z][\w-]*\d[\w.-]*")


def timeout_problem(value: str, flag: str) -> str | None:
    """Why `-t VALUE` is ambiguous, with the fix; None when it is not. A bare number is minutes (seed 003)."""
    minutes = _bare_number(value)
    if minutes is None or minutes <= BARE_MINUTES_MAX:
        return None
    text = value.strip()
    hours = minutes / 60
    meant = f"{hours:g} hours" if hours == int(hours) else f"{minutes:g} minutes ({hours:.1f} hours)"
    return f"{flag} {text} means {meant}; for seconds write {flag} {text}s, for hours {flag} {hours:g}h"


def bare_timeout_in_story_specs(value: str, flag: str) -> str | None:
    """Why a bare `-t N` is refused in a story-spec project, where seed 002's users mean seconds; else None."""
    if _bare_number(value) is None:
        return None
    text = value.strip()
    return (
        f"{flag} {text}: ambiguous in a story-spec project (seed 002's ralph.sh reads -t in seconds, ralph in "
        f"minutes); write {flag} {text}s for seconds or {flag} {text}m for minutes"
    )


def _bare_number(value: str) -> float | None:
    """The number a duration without a unit is (as parse_duration reads it: `1e3`, `+60`, `1_000` too)."""
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def story_shaped_rate(value: str) -> str | None:
    """Why `-r VALUE` is refused when VALUE is a story id (seed 002's "resume from"), with the fix; else None."""
    text = value.strip()
    if _STORY_ID.fullmatch(text):
        return f"-r {text}: -r is agent calls per hour; did you mean --resume-from {text}?"
    return None


def rate_in_story_specs(value: str) -> str:
    """Why a bare `-r N` is refused in a story-spec project, where seed 002's users type it for a story."""
    text = value.strip()
    return (
        f"-r {text}: ambiguous in a story-spec project (seed 002's ralph.sh reads -r as a story to resume from); "
        f"write --rate-limit {text} for {text} agent calls per hour, or --resume-from ID to skip to a story"
    )


def story_spec_refusal(timeout: str | None, timeout_flag: str, rate: str | None, rate_flag: str) -> str | None:
    """Why these -t and -r values are refused in a story-spec workspace (seed 002's -t SECS and -r STORY), with the
    fix; None when they are not. Pure: the caller looks at the workspace only when there is a reason."""
    problem = bare_timeout_in_story_specs(timeout, timeout_flag) if timeout is not None else None
    return problem or (rate_in_story_specs(rate) if rate is not None and rate_flag == "-r" else None)
