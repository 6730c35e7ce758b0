"""Exponential backoff (seed 004): 5 s, doubling, capped at 600 s, for at most 10 attempts."""

from __future__ import annotations

import re

from msgspec import Struct


class Backoff(Struct, frozen=True):
    """The `backoff:` settings: retries of transient API errors and of a wrong model."""

    initial_s: float = 5.0
    cap_s: float = 600.0
    attempts: int = 10

    def delay(self, attempt: int) -> float:
        """The wait before retry `attempt` (1-based): 5, 10, 20, … 600, 600."""
        if attempt < 1:
            raise ValueError("attempts count from 1")
        return float(min(self.cap_s, self.initial_s * 2 ** min(attempt - 1, 62)))

    def exhausted(self, attempt: int) -> bool:
        """True once `attempt` retries have been used up."""
        return attempt > self.attempts


def model_matches(requested: str, used: str) -> bool:
    """Whether the model the agent used is the one asked for.

    An alias (haiku, sonnet, opus) matches any model of that family; a full name matches
    itself, with or without a date suffix (`claude-opus-4-5` matches `claude-opus-4-5-20251101`,
    but `claude-opus-4` does not match `claude-opus-4-5-…`: that is another model).
    """
    want = requested.strip().lower()
    got = used.strip().lower()
    if not want or not got:
        return False
    if want in ("haiku", "sonnet", "opus"):
        return want in got.replace("[", "-").split("-")
    # Only a date (-20250929) or a context tag ([1m]) may follow: claude-sonnet-4 is not claude-sonnet-4-5.
    return re.fullmatch(re.escape(want) + r"(?:-\d{8})?(?:\[[^\]]*\])?", got) is not None


def model_check(want: str | None, poorman: bool, used: str | None, *, warned: bool) -> tuple[str | None, str | None]:
    """`--model`'s check of one run: (why the model is wrong, or None; a warning to give once when the agent
    does not say which model answered, or None)."""
    if not want or poorman:
        return None, None
    if used is None:
        return None, None if warned else f"cannot verify --model {want}: the agent did not report its model"
    return (None if model_matches(want, used) else f"got {used} instead of {want}"), None
