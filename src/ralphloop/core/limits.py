"""A vendor's usage limit as a value an agent's result carries (read out of its output by agents/, acted on by
guards/usage.py and the engine): "the subscription ran out until T", which is not "the task failed"."""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct


class UsageLimit(Struct, frozen=True):
    """A vendor usage limit the agent hit (not a failure of the task)."""

    vendor: str  # "claude" | "codex" | "gemini" | "unknown"
    message: str  # one clean line for users (the CLI's own sentence, <= 300 chars)
    resets_at: datetime | None  # timezone-aware UTC; None when the vendor gave no reset time
    kind: str = (
        ""  # five_hour | seven_day | seven_day_opus | session | weekly | opus | sonnet | daily | extra_usage | ""
    )
    source: str = ""  # "rate_limit_event" | "api_error" | "text" | "failover" | "window" (the user's cap, issue 34)

    def record(self, policy: str, at: str) -> dict[str, str | None]:
        """As status.json keeps it: what the vendor said, when it resets, and what the loop does about it."""
        resets = self.resets_at.strftime("%Y-%m-%dT%H:%M:%SZ") if self.resets_at else None
        return {
            "message": self.message,
            "vendor": self.vendor,
            "kind": self.kind,
            "resetsAt": resets,
            "policy": policy,
            "at": at,
        }


class UsageWindow(Struct, frozen=True):
    """One usage window of the agent's account as the vendor reported it with a call (never guessed): the share of it
    used and when it resets. The windows a loop paces against (issue 34)."""

    name: str  # five_hour | seven_day | seven_day_opus | seven_day_sonnet | <N>_minutes
    utilization: float  # 0..1
    resets_at: datetime | None  # timezone-aware UTC; None when the vendor gave none


class WindowReading(Struct, frozen=True):
    """One window of an account as a call reported it, and when (the book keeps these, shared by every loop)."""

    window: UsageWindow
    read_at: datetime


class LimitWarning(Struct, frozen=True):
    """Near the limit (Claude rate_limit_event status allowed_warning)."""

    utilization: float  # 0..1
    resets_at: datetime | None
    kind: str = ""
