"""How far, how much, when: the header's numbers, worded the same by the monitor and `ralph status`.

Each function reads the report `ralph status --json` gives (state/report.gather) and the moment to word it for.
Times on screen are local (`14:05`); the files keep UTC. Pure, and stdlib only: `ralph status` uses it.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from ralphloop.words.figures import money
from ralphloop.words.textsafe import one_line, strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RATE_AFTER_S = 60.0  # a cost per hour over less than a minute of run says more about one call than the pace


def parse_time(value: object) -> datetime | None:
    """A record's ISO time (`2026-01-09T12:00:00Z`) as an aware datetime; None when absent or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """Seconds from `start` to `end`; None when either is unknown or out of datetime's range."""
    if start is None or end is None:
        return None
    try:
        return (end - start).total_seconds()
    except (OverflowError, ValueError):
        return None


def local_clock(moment: datetime | None, *, seconds: bool = True) -> str:
    """`14:05:12` (or `14:05`) in the local zone; "" when unknown or out of range."""
    if moment is None:
        return ""
    try:
        return f"{moment.astimezone():%H:%M:%S}" if seconds else f"{moment.astimezone():%H:%M}"
    except (OverflowError, ValueError, OSError):
        return ""


def local_when(moment: datetime | None, now: datetime) -> str:
    """`14:05:12` today (local), `2026-11-20 14:05` another day; "" when unknown or out of range."""
    if moment is None:
        return ""
    try:
        local, today = moment.astimezone(), now.astimezone()
    except (OverflowError, ValueError, OSError):
        return ""
    return f"{local:%H:%M:%S}" if local.date() == today.date() else f"{local:%Y-%m-%d %H:%M}"


def countdown(seconds: float) -> str:
    """`MM:SS`, or `H:MM:SS` from an hour on (a clock that moves every second)."""
    left = max(0, int(seconds + 0.999))
    hours, rest = divmod(left, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def stopwatch(seconds: float) -> str:
    """Like `countdown`, but whole seconds elapsed are not rounded up."""
    return countdown(max(0, int(seconds)))


def rough(seconds: float) -> str:
    """A span to the unit that matters: `40s`, `12m`, `1h20m`, `2d3h`."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes = round(whole / 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    return f"{hours // 24}d{hours % 24}h"


def eta_seconds(elapsed_s: float, done_this_run: int, left: int) -> float | None:
    """Seconds until the last task is done, at this run's pace so far (its wall time per task done, waits and
    failed attempts included); None until the run has done a task. 0 when nothing is left."""
    if left <= 0:
        return 0.0
    if done_this_run <= 0 or elapsed_s <= 0:
        return None
    return elapsed_s / done_this_run * left


def run_seconds(report: dict[str, Any], now: datetime | None) -> float | None:
    """How long the run has lasted: until now while it runs, until its last record once it has ended."""
    started = parse_time(report.get("startedAt"))
    end = now if report.get("alive") else parse_time(report.get("lastUpdated"))
    seconds = seconds_between(started, end)
    return max(0.0, seconds) if seconds is not None else None


def eta_words(report: dict[str, Any], now: datetime) -> str | None:
    """`ETA ~14:05 (≈ 40m)`, `ETA unknown` before the run has done a task; None when the run is not going
    on or nothing is left to do."""
    done, left, elapsed = report.get("storiesDoneThisRun"), report.get("storiesLeft"), run_seconds(report, now)
    if not report.get("alive") or not isinstance(done, int) or not isinstance(left, int) or left <= 0:
        return None
    # a narrowed run (-s, --resume-from) counts what is left of its scope, not of the feature: say whose ETA it is
    scope = report.get("scope")
    eta = f"ETA for {one_line(strip_terminal_controls(scope), 60)}" if isinstance(scope, str) and scope else "ETA"
    seconds = eta_seconds(elapsed or 0.0, done, left)
    if seconds is None:
        return f"{eta} unknown"
    try:
        moment = now + timedelta(seconds=seconds)
    except OverflowError:
        return f"{eta} unknown"
    return f"{eta} ~{local_clock(moment, seconds=False)} (≈ {rough(seconds)})"


def elapsed_words(report: dict[str, Any], now: datetime) -> str | None:
    """`12m since 13:25`, `1h05m of 2h budget since 13:25`."""
    seconds = run_seconds(report, now)
    if seconds is None:
        return None
    text = rough(seconds)
    limit = _number(report.get("maxRuntimeS"))
    if limit:
        text += f" of {rough(limit)} budget"
    return f"{text} since {local_clock(parse_time(report.get('startedAt')), seconds=False)}"


def cost_words(report: dict[str, Any], now: datetime | None) -> str | None:
    """`$1.20 of $5.00 · $0.90/h`: this run's cost, of its budget, and its rate over the run's wall time."""
    cost, limit = _number(report.get("costUsd")), _number(report.get("maxCostUsd"))
    if cost is None:
        return f"cost not reported (budget {money(limit)})" if limit else None
    # numbers.money, as on the run's own lines: a cheap run reads $0.0040 on every screen, not $0.00 on some
    text = money(cost) + (f" of {money(limit)}" if limit else "")
    seconds = run_seconds(report, now)
    if seconds is not None and seconds >= RATE_AFTER_S and cost > 0:
        text += f" · {money(cost / seconds * 3600)}/h"
    return text + unpriced_words(report)


def unpriced_words(report: dict[str, Any]) -> str:
    """ " + the cost of 3 calls not reported": what a cost total leaves out (an agent without a price)."""
    tokens = report.get("tokens")
    missing = tokens.get("callsWithoutCost") if isinstance(tokens, dict) else None
    if not isinstance(missing, int) or isinstance(missing, bool) or missing <= 0:
        return ""
    return f" + the cost of {missing:,} call{'s' if missing != 1 else ''} not reported"


def token_budget_words(report: dict[str, Any]) -> str | None:
    """`4,500 of 100,000 budget`: input + output tokens against `--max-tokens`, when there is one."""
    limit = report.get("maxTokens")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        return None
    used = report.get("tokensUsed")
    return f"{used if isinstance(used, int) and not isinstance(used, bool) else 0:,} of {limit:,} budget"


def iteration_clock(report: dict[str, Any], now: datetime) -> str | None:
    """`03:12 of 30:00`: the iteration going on, against its timeout; None between iterations."""
    if not report.get("inIteration"):
        return None
    seconds = seconds_between(parse_time(report.get("iterationStartedAt")), now)
    if seconds is None:
        return None
    limit = _number(report.get("iterationTimeoutS"))
    return stopwatch(seconds) + (f" of {stopwatch(limit)}" if limit else "")


def last_output_words(report: dict[str, Any], now: datetime) -> str | None:
    """`last output 40s ago` (the agent's, this iteration: the real sign of a stuck agent), `no output yet`."""
    if not report.get("inIteration") or report.get("iterationStartedAt") is None:
        return None
    seconds = seconds_between(parse_time(report.get("lastOutputAt")), now)
    if seconds is None:
        return "no output yet"
    return f"last output {rough(max(0.0, seconds))} ago"


def calls_full(report: dict[str, Any]) -> bool:
    """Every hourly call slot is used: only then does it matter when the next one frees."""
    used, limit = report.get("apiCallsUsed"), report.get("apiCallsLimit")
    return isinstance(used, int) and isinstance(limit, int) and limit > 0 and used >= limit


def _number(value: object) -> float | None:
    """A finite number from a state file (which the agent can write: NaN and 1e999 read as no number)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None
