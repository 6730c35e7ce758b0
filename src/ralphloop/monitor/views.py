"""Snapshot → what the monitor draws: pure functions, so they render to text in tests.

Agent-written text (task titles, activity, reasons, log lines) is stripped of escape sequences and
always wrapped in `rich.text.Text`, never parsed as markup: `[bold]` or an escape in an agent's output
cannot restyle or repaint the screen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ralphloop.durations import format_duration
from ralphloop.monitor.snapshot import Snapshot, parse_time
from ralphloop.numbers import iteration_words, tokens_words
from ralphloop.tasks.formats import format_of
from ralphloop.textsafe import one_line, strip_terminal_controls

WAITING_TEXT = "Waiting for Ralph to start..."
_STATUS_STYLES = {
    "running": "bold green",
    "starting": "green",
    "waiting": "yellow",
    "complete": "bold green",
    "interrupted": "yellow",
    "halted": "bold red",
    "failed": "bold red",
    "circuit_open": "bold red",
    "stopped": "red",
}
_CIRCUIT_STYLES = {"CLOSED": "green", "HALF_OPEN": "yellow", "OPEN": "bold red"}
_LEVEL_STYLES = {"ok": "green", "fail": "red", "warn": "yellow", "info": "cyan"}


def safe(value: object, limit: int = 300) -> str:
    """Untrusted text as one clean line."""
    return one_line(strip_terminal_controls(str(value)), limit)


def whole(value: object) -> int:
    """A count from a state file: an int, or 0 for anything else (a hand-edited or hostile file)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def seconds_until(moment: datetime | None, now: datetime) -> float | None:
    """Seconds from `now` to `moment`; None when unknown or out of datetime's range."""
    if moment is None:
        return None
    try:
        return (moment - now).total_seconds()
    except (OverflowError, ValueError):
        return None


def local_clock(moment: datetime | None) -> str:
    """HH:MM:SS in the local zone; "" when unknown or out of range."""
    if moment is None:
        return ""
    try:
        return f"{moment.astimezone():%H:%M:%S}"
    except (OverflowError, ValueError, OSError):
        return ""


def countdown(seconds: float) -> str:
    """`MM:SS`, or `H:MM:SS` from an hour on."""
    left = max(0, int(seconds + 0.999))
    hours, rest = divmod(left, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def until(value: object, now: datetime) -> str | None:
    """How long until an ISO time, as a countdown; None when it is unknown."""
    seconds = seconds_until(parse_time(value), now)
    return countdown(seconds) if seconds is not None else None


def iteration_text(report: dict[str, Any]) -> str:
    counted, uncounted = whole(report.get("iterationsCounted")), whole(report.get("callsNotCounted"))
    running = report.get("inIteration") is True
    number, limit = whole(report.get("iteration")), whole(report.get("maxIterations"))
    return iteration_words(number, counted, uncounted, limit, running=running)


def circuit_text(report: dict[str, Any]) -> Text:
    state = str(report.get("circuitState") or "CLOSED")
    text = Text(state, style=_CIRCUIT_STYLES.get(state, "yellow"))
    if report.get("circuitReason"):
        text.append(f" - {safe(report['circuitReason'], 200)}")
    if state == "OPEN":
        text.append("  Execution halted", style="bold red")
    return text


def calls_text(report: dict[str, Any], now: datetime) -> str | None:
    if not report.get("apiCallsLimit"):
        return None
    text = f"{report.get('apiCallsUsed', 0)}/{report['apiCallsLimit']} this hour"
    seconds = seconds_until(parse_time(report.get("rateLimitResetsAt")), now)
    return text if seconds is None or seconds <= 0 else text + f" (a slot frees in {countdown(seconds)})"


def signals_text(counts: dict[str, int]) -> str | None:
    shown = [f"{label} {count}" for label, count in counts.items() if count]
    return " · ".join(shown) if shown else None


def spent_text(report: dict[str, Any]) -> str | None:
    cost, tokens = number(report.get("costUsd")), report.get("tokens")
    kinds = tokens if isinstance(tokens, dict) else {}
    spent = tokens_words(kinds.get("inputTokens"), kinds.get("outputTokens"), kinds.get("cacheReadTokens"))
    if not kinds and whole(report.get("tokensUsed")):  # a status.json of an older ralph: one total
        spent = f"{whole(report.get('tokensUsed')):,} tokens"
    if cost is None and not spent:
        return None
    missing = kinds.get("callsWithoutCost")
    unknown = (
        f" + {missing:,} not priced"
        if isinstance(missing, int) and not isinstance(missing, bool) and missing > 0
        else ""
    )
    text = " · ".join(part for part in (f"${cost:.2f}{unknown}" if cost is not None else "", spent) if part)
    return text + (f" · {safe(report['model'], 60)}" if report.get("model") else "")


def doing_text(report: dict[str, Any], now: datetime) -> Text | None:
    waiting = report.get("waiting")
    if isinstance(waiting, dict):
        left = until(waiting.get("until"), now)
        return Text(f"⏳ {safe(waiting.get('message'), 200)}" + (f" · {left} left" if left else ""), style="yellow")
    if report.get("activity"):
        return Text(f"⚙ {safe(report['activity'], 200)}")
    return None


def progress_row(report: dict[str, Any]) -> RenderableType:
    done, total = whole(report.get("storiesComplete")), whole(report.get("storiesTotal"))
    word = format_of(str(report.get("format"))).done_words
    grid = Table.grid(padding=(0, 1))
    bar = ProgressBar(total=max(total, 1), completed=done if total else 0, width=20)
    grid.add_row(bar, f"{done}/{total} {word}" + scoped(report))
    return grid


def scoped(report: dict[str, Any], why: str = "") -> str:
    """ " (story 1.2 only)" when the counts are a narrowed run's (-s, --resume-from), not the feature's."""
    scope = report.get("countsScope")
    return f" ({safe(scope, 80)} only{why})" if scope else ""


def facts(snapshot: Snapshot) -> Table:
    """The key/value block: iteration, status, task, progress, calls, circuit, signals, spend."""
    report = snapshot.report or {}
    now = snapshot.now
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    status = str(report.get("status") or "not started")
    reason = report.get("exitReason")
    status_text = Text(status, style=_STATUS_STYLES.get(status, ""))
    if reason and reason != status:
        status_text.append(f" ({safe(reason, 40)})")
    rows: list[tuple[str, RenderableType | str | None]] = [
        ("Iteration", iteration_text(report)),
        ("Status", status_text),
        ("Task", Text(safe(report["currentStory"], 200)) if report.get("currentStory") else None),
        ("Progress", progress_row(report)),
        ("Doing", doing_text(report, now)),
        ("Calls", calls_text(report, now)),
        ("Circuit", circuit_text(report)),
        ("Signals", signals_text(snapshot.signals)),
        ("Spent", spent_text(report)),
    ]
    if isinstance(report.get("retryCount"), int) and report["retryCount"] > 0:
        rows.append(("Retries", f"{report['retryCount']} of {report.get('maxRetries')} at this task"))
    age = seconds_until(now, parse_time(report.get("lastUpdated")) or now)
    if report.get("lastUpdated") and age is not None:
        rows.append(("Updated", f"{format_duration(max(0, int(age)))} ago"))
    for label, value in rows:
        if value is not None:  # a str cell would be read as rich markup: every cell is Text
            table.add_row(label, Text(value) if isinstance(value, str) else value)
    return table


def events_panel(snapshot: Snapshot) -> Panel:
    lines = Text()
    for item in snapshot.events:
        clock = local_clock(parse_time(item.get("time")))
        if lines:
            lines.append("\n")
        lines.append(f"[{clock}] " if clock else "", style="dim")
        lines.append(safe(item.get("text"), 200), style=_LEVEL_STYLES.get(item.get("level", ""), ""))
    return Panel(lines or Text("none yet", style="dim"), title="Recent events", title_align="left")


def log_panel(snapshot: Snapshot) -> Panel:
    body = Text("\n".join(safe(line, 400) for line in snapshot.log_lines) or "no output yet", no_wrap=True)
    if not snapshot.log_lines:
        body.stylize("dim")
    title = f"Log · {safe(snapshot.log_name, 60)}" if snapshot.log_name else "Log"
    return Panel(body, title=Text(title), title_align="left")


def dashboard(snapshot: Snapshot) -> RenderableType:
    """The live view of a run."""
    if snapshot.report is None:
        return waiting_view()
    report = snapshot.report
    agent = f" · {safe(report['agent'], 40)}" if report.get("agent") else ""
    title = Text(f"ralph monitor · {safe(report.get('feature'), 60)}{agent}", style="bold")
    parts: list[RenderableType] = [title, facts(snapshot)]
    if report.get("guidance") and report.get("circuitState") == "OPEN":
        parts.append(Text(strip_terminal_controls(str(report["guidance"])), style="red"))
    parts += [events_panel(snapshot), log_panel(snapshot)]
    return Group(*parts)


def waiting_view() -> RenderableType:
    return Text(WAITING_TEXT, style="dim")


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The completion summary (seed 000 UC-5 7a): total iterations, duration, exit reason; plain text."""
    started, ended = parse_time(report.get("startedAt")), parse_time(report.get("lastUpdated"))
    seconds = seconds_until(ended, started) if started else None
    duration = format_duration(max(0, round(seconds))) if seconds is not None else "unknown"
    done, total = whole(report.get("storiesComplete")), whole(report.get("storiesTotal"))
    word = format_of(str(report.get("format"))).done_words
    reason = safe(report.get("exitReason") or report.get("status"), 60)
    lines = [
        f"Ralph has exited: {safe(report.get('status'), 40)}",
        f"Iteration:  {iteration_text(report)}",
        f"Duration:   {duration}",
        f"Exit:       {reason}" + (f" - {safe(report['exitMessage'], 300)}" if report.get("exitMessage") else ""),
        f"Progress:   {done}/{total} {word}" + scoped(report, ": the last run was narrowed"),
    ]
    spent = spent_text(report)
    if spent:
        lines.append(f"Spent:      {spent}")
    if report.get("lastMessage"):
        lines.append(f"Agent said: {safe(report['lastMessage'], 600)}")
    if report.get("guidance"):
        lines += [safe(line, 300) for line in str(report["guidance"]).splitlines() if line.strip()]
    return lines


def summary_view(snapshot: Snapshot) -> RenderableType:
    report = snapshot.report or {}
    status = str(report.get("status"))
    lines = summary_lines(report)
    style = "green" if status == "complete" else "yellow" if status == "interrupted" else "red"
    return Panel(Text("\n".join(lines[1:])), title=Text(lines[0], style=f"bold {style}"), title_align="left")


def plain_line(snapshot: Snapshot) -> str:
    """The run in one line, for a monitor writing to a pipe or a file (printed when it changes)."""
    report = snapshot.report
    if report is None:
        return WAITING_TEXT
    parts = [
        f"iteration {iteration_text(report)}",
        safe(report.get("status"), 40),
        safe(report["currentStory"], 120) if report.get("currentStory") else "",
        f"{whole(report.get('storiesComplete'))}/{whole(report.get('storiesTotal'))} done" + scoped(report),
    ]
    calls = calls_text(report, snapshot.now)
    if calls:
        parts.append("calls " + calls.split(" (", 1)[0])
    parts.append(f"circuit {report.get('circuitState') or 'CLOSED'}")
    doing = doing_text(report, snapshot.now)
    if doing is not None and not isinstance(report.get("waiting"), dict):
        parts.append(doing.plain)  # a countdown would change the line every second
    elif isinstance(report.get("waiting"), dict):
        parts.append(f"waiting: {safe(report['waiting'].get('message'), 120)}")
    return " · ".join(part for part in parts if part)
