"""Vendor usage limits as values: tell "the subscription ran out until T" apart from "the task failed".

A subscription agent that hits its 5-hour, weekly or daily limit exits (non-zero, or for one older Claude Code
even 0) with a one-line sentence, and every further iteration fails the same way until the limit resets. The loop
must not count that as a failed iteration, trip its circuit breaker or burn its retries on it: it should pause
until the reset. The values here say so, whichever vendor it was. Reading them out of an agent's output is the
agents' part: agents/limit_text.py finds the CLIs' sentences, each backend reads its own structured events
(agents/claude/limit_events.py), and reset_time.py turns a printed reset phrase into an instant.

Pure: no I/O, stdlib only.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from msgspec import Struct

from ralphloop.core.limits import LimitWarning, UsageLimit
from ralphloop.guards.reset_time import parse_reset
from ralphloop.words.patterns import lazy

MESSAGE_MAX = 300

ANSI_ESCAPE = lazy(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f]")


class LimitSentence(Struct, frozen=True):
    """A usage-limit sentence found on one line of an agent's output, its reset phrase not yet read."""

    start: int  # where the sentence starts on its line
    vendor: str
    sentence: str
    reset: str | None = None  # a phrase for parse_reset
    after: str | None = None  # a duration from now
    kind: str = ""

    def limit(self, now: datetime, local: tzinfo) -> UsageLimit:
        """The limit this sentence reports, its reset read against `now` in the zone `local`."""
        if self.reset is not None:
            resets_at = parse_reset(self.reset, now, local)
        elif self.after is not None:
            resets_at = parse_reset("in " + self.after, now, local)
        else:
            resets_at = None
        return UsageLimit(self.vendor, clean_message(self.sentence), resets_at, self.kind, "text")


def clean_message(text: str) -> str:
    """`text` as one line for users: escapes and control characters gone, at most MESSAGE_MAX characters."""
    flat = " ".join(_CONTROL.sub(" ", ANSI_ESCAPE.sub("", text)).split())
    return flat if len(flat) <= MESSAGE_MAX else flat[: MESSAGE_MAX - 1].rstrip() + "…"


def wait_for(limit: UsageLimit, now: datetime, margin_s: float, fallback_s: float) -> float:
    """How long to wait at a usage limit: to the vendor's reset time plus the margin, or the fallback."""
    if limit.resets_at is None:
        return fallback_s
    return max(0.0, (limit.resets_at - now).total_seconds()) + margin_s


def pause_for(warning: LimitWarning | None, now: datetime, pause_at: float | None, margin_s: float) -> float:
    """Near the limit (`usage_limit.pause_at`): seconds to pause until that window resets; 0 to go on."""
    if warning is None or pause_at is None or warning.utilization < pause_at or warning.resets_at is None:
        return 0.0
    left = (warning.resets_at - now).total_seconds()
    return max(0.0, left) + margin_s if left > 0 else 0.0
