"""The dashboard's header: where the run stands, how far, how much, and when it will be done (words/pace.py's words).

Two forms: the labelled rows of the full view, and the handful of lines of the compact view (a narrow or short
pane). Every value is `rich.text.Text` made from cleaned text, never markup; every row keeps to one line (it is
cut with an ellipsis rather than wrapped), so the screen's layout can count them.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ralphloop.monitor.snapshot import Snapshot
from ralphloop.monitor.words import calls_text, doing_text, iteration_text, safe, scoped, tokens_text, whole
from ralphloop.plugins.formats import format_of
from ralphloop.words.pace import cost_words, elapsed_words, eta_words, iteration_clock, last_output_words
from ralphloop.words.windows import window_line

# What each status word means at a glance: done green, waiting yellow, halted red; a run going on is calm cyan.
STATUS_STYLES = {
    "running": "cyan",
    "starting": "cyan",
    "waiting": "yellow",
    "paused": "yellow",  # by the user (`ralph pause`, the page)
    "complete": "bold green",
    "interrupted": "yellow",
    "halted": "bold red",
    "failed": "bold red",
    "circuit_open": "bold red",
    "stopped": "red",
}
_CIRCUIT_STYLES = {"CLOSED": "green", "HALF_OPEN": "yellow", "OPEN": "bold red"}
TALL = 30  # from this many rows on, the rows that only say all is well (calls free, circuit closed) are shown too


def title(report: dict[str, Any]) -> Text:
    agent = f" · {safe(report['agent'], 40)}" if report.get("agent") else ""
    model = f" · {safe(report['model'], 60)}" if report.get("model") else ""
    return Text(f"ralph monitor · {safe(report.get('feature'), 60)}{agent}{model}", style="bold", no_wrap=True)


def status_text(report: dict[str, Any]) -> Text:
    status = safe(report.get("status") or "not started", 40)  # status.json can be written by the agent
    text = Text(status, style=STATUS_STYLES.get(status, ""))
    reason = report.get("exitReason")
    if reason and reason != status:
        text.append(f" ({safe(reason, 40)})")
    return text


def circuit_text(report: dict[str, Any]) -> Text:
    state = safe(report.get("circuitState") or "CLOSED", 40)
    text = Text(state, style=_CIRCUIT_STYLES.get(state, "yellow"))
    if report.get("circuitReason"):
        text.append(f" - {safe(report['circuitReason'], 200)}")
    if state == "OPEN":
        text.append("  Execution halted", style="bold red")
    return text


def clock_text(report: dict[str, Any], snapshot: Snapshot) -> str:
    """`03:12 of 30:00 · last output 40s ago`: the iteration going on; "" between iterations."""
    parts = (iteration_clock(report, snapshot.now), last_output_words(report, snapshot.now))
    return " · ".join(part for part in parts if part)


def progress(report: dict[str, Any], snapshot: Snapshot, *, bar: int = 20, short: bool = False) -> RenderableType:
    """The bar (green: done), `1/3 stories pass` and the ETA."""
    done, total = whole(report.get("storiesComplete")), whole(report.get("storiesTotal"))
    words = f"{done}/{total} done" if short else f"{done}/{total} {format_of(str(report.get('format'))).done_words}"
    eta = eta_words(report, snapshot.now)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, overflow="ellipsis")
    meter = ProgressBar(
        total=max(total, 1),
        completed=done if total else 0,
        width=bar,
        style="bright_black",  # what is left: quiet
        complete_style="green",  # rich's default is its error pink
        finished_style="bold green",
    )
    grid.add_row(meter, Text(words + ("" if short else scoped(report)) + (f" · {eta}" if eta else "")))
    return grid


def rows(snapshot: Snapshot, *, tall: bool) -> list[tuple[str, RenderableType]]:
    """The labelled rows of the full view; `tall`: room for the rows that only say all is well."""
    report = snapshot.report or {}
    now = snapshot.now
    clock = clock_text(report, snapshot)
    spent = cost_words(report, now)
    tokens = tokens_text(report)
    found: list[tuple[str, RenderableType | str | None]] = [
        ("Status", status_text(report)),
        ("Iteration", iteration_text(report) + (f" · {clock}" if clock else "")),
        ("Task", safe(report["currentStory"], 200) if report.get("currentStory") else None),
        ("Progress", progress(report, snapshot)),
        ("Elapsed", elapsed_words(report, now)),
        ("Spent", spent),
        ("Tokens", tokens),
        ("Doing", doing_text(report, now)),
    ]
    calls = calls_text(report, now)
    if calls is not None and (tall or " frees " in calls):
        found.append(("Calls", calls))
    for window in report.get("windows") or ():  # the accounts' usage windows: share, cap, reset (issue 34)
        cap, share = window.get("cap"), window.get("utilization")
        past = isinstance(cap, int | float) and isinstance(share, int | float) and share >= cap
        found.append(("Window", Text(window_line(window, now), style="red" if past else "")))
    circuit = circuit_text(report)
    if tall or circuit.plain != "CLOSED":
        found.append(("Circuit", circuit))
    signals = [f"{label} {count}" for label, count in snapshot.signals.items() if count]
    if signals:
        found.append(("Signals", " · ".join(signals)))
    retries = report.get("retryCount")
    if isinstance(retries, int) and not isinstance(retries, bool) and retries > 0:
        found.append(("Retries", f"{retries} of {report.get('maxRetries')} at this task"))
    # a str cell would be read as rich markup: every cell is Text
    return [(label, Text(value) if isinstance(value, str) else value) for label, value in found if value is not None]


def facts(found: list[tuple[str, RenderableType]]) -> Table:
    """The rows as a two-column grid, each on one line."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True, overflow="ellipsis")
    for label, value in found:
        table.add_row(label, value)
    return table


def compact(snapshot: Snapshot) -> list[RenderableType]:
    """The key lines for a narrow or short pane: status, task, progress and ETA, spend, doing, the clock."""
    report = snapshot.report or {}
    now = snapshot.now
    head = Text(f"{safe(report.get('feature'), 40)} · ", no_wrap=True, overflow="ellipsis")
    head.append_text(status_text(report))
    head.append(f" · iteration {iteration_text(report)}" if whole(report.get("iteration")) else "")
    lines: list[RenderableType] = [head]
    if report.get("currentStory"):
        lines.append(Text(safe(report["currentStory"], 200), no_wrap=True, overflow="ellipsis"))
    lines.append(progress(report, snapshot, bar=10, short=True))
    clock = clock_text(report, snapshot)
    clock = f"iteration {whole(report.get('iteration'))}: {clock}" if clock else ""
    for value in (cost_words(report, now), doing_text(report, now), clock):
        if value:
            line = Text(value) if isinstance(value, str) else value
            line.no_wrap, line.overflow = True, "ellipsis"
            lines.append(line)
    return lines
