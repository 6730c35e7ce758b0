"""The monitor's words for the report's values, as plain strings (or one `Text` where colour means something).

Every value may come from the agent (it can write the state files): text is cleaned of escapes and cut to one
line, counts that are not counts read as 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from ralphloop.words.figures import iteration_words, tokens_words
from ralphloop.words.pace import calls_full, countdown, parse_time, seconds_between, token_budget_words
from ralphloop.words.textsafe import one_line, strip_terminal_controls


def safe(value: object, limit: int = 300) -> str:
    """Untrusted text as one clean line."""
    return one_line(strip_terminal_controls(str(value)), limit)


def whole(value: object) -> int:
    """A count from a state file: an int, or 0 for anything else (a hand-edited or hostile file)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def until(value: object, now: datetime) -> str | None:
    """How long until an ISO time, as a countdown; None when it is unknown."""
    seconds = seconds_between(now, parse_time(value))
    return countdown(seconds) if seconds is not None else None


def iteration_text(report: dict[str, Any]) -> str:
    counted, uncounted = whole(report.get("iterationsCounted")), whole(report.get("callsNotCounted"))
    running = report.get("inIteration") is True
    number, limit = whole(report.get("iteration")), whole(report.get("maxIterations"))
    return iteration_words(number, counted, uncounted, limit, running=running)


def calls_text(report: dict[str, Any], now: datetime) -> str | None:
    """`45/100 this hour`; when every slot is used, also when the next one frees (before that it does not matter)."""
    if not report.get("apiCallsLimit"):
        return None
    text = f"{whole(report.get('apiCallsUsed'))}/{whole(report['apiCallsLimit'])} this hour"
    seconds = seconds_between(now, parse_time(report.get("rateLimitResetsAt")))
    if not calls_full(report) or seconds is None or seconds <= 0:
        return text
    return text + f" · a slot frees in {countdown(seconds)}"


def tokens_text(report: dict[str, Any]) -> str | None:
    """`12,345 in / 3,456 out tokens, 1,200 cache reads · 15,801 of 100,000 budget`."""
    tokens = report.get("tokens")
    kinds = tokens if isinstance(tokens, dict) else {}
    spent = tokens_words(kinds.get("inputTokens"), kinds.get("outputTokens"), kinds.get("cacheReadTokens"))
    if not kinds and whole(report.get("tokensUsed")):  # a status.json of an older ralph: one total
        spent = f"{whole(report.get('tokensUsed')):,} tokens"
    budget = token_budget_words(report)
    return " · ".join(part for part in (spent, budget) if part) or None


def doing_text(report: dict[str, Any], now: datetime) -> Text | None:
    """What the loop or the agent is doing now: a wait in yellow (the user's answer above all), else the tool."""
    waiting = report.get("waiting")
    if isinstance(waiting, dict):
        left = until(waiting.get("until"), now)
        message = safe(waiting.get("message"), 200) if waiting.get("message") else ""
        if waiting.get("kind") == "answer":  # the loop asks the user (core/waiting.py); the message may say so already
            asked = " · ".join(part for part in (message, "waiting for your answer") if part)
            text = (message if "waiting for your answer" in message else asked) + (f" ({left})" if left else "")
        elif waiting.get("kind") == "paused":  # the user's pause: no end of its own (core/steering.PAUSED)
            return Text(f"⏸ {message}", style="yellow")
        else:
            text = message + (f" · {left} left" if left else "")
        return Text(f"⏳ {text}", style="yellow")
    if report.get("activity"):
        return Text(f"⚙ {safe(report['activity'], 200)}")
    return None


def scoped(report: dict[str, Any], why: str = "") -> str:
    """ " (story 1.2 only)" when the counts are a narrowed run's (-s, --resume-from), not the feature's."""
    scope = report.get("countsScope")
    return f" ({safe(scope, 80)} only{why})" if scope else ""
