"""Snapshot → what the monitor draws: pure functions, so they render to text in tests.

Agent-written text (task titles, activity, reasons, log lines) is stripped of escape sequences and
always wrapped in `rich.text.Text`, never parsed as markup: `[bold]` or an escape in an agent's output
cannot restyle or repaint the screen.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from ralphloop.monitor import fleet, header, layout
from ralphloop.monitor.snapshot import Snapshot
from ralphloop.monitor.words import calls_text, doing_text, iteration_text, safe, scoped, tokens_text, whole
from ralphloop.plugins.formats import format_of
from ralphloop.words.durations import format_duration
from ralphloop.words.pace import cost_words, local_clock, parse_time, seconds_between
from ralphloop.words.textsafe import strip_terminal_controls

WAITING_TEXT = "Waiting for Ralph to start..."
_LEVEL_STYLES = {"ok": "green", "fail": "red", "warn": "yellow", "info": "cyan"}


def events_panel(events: list[dict[str, str]]) -> Panel:
    lines = Text(no_wrap=True, overflow="ellipsis")
    for item in events:
        clock = local_clock(parse_time(item.get("time")))
        if lines:
            lines.append("\n")
        lines.append(f"[{clock}] " if clock else "", style="dim")
        lines.append(safe(item.get("text"), 200), style=_LEVEL_STYLES.get(item.get("level", ""), ""))
    return Panel(lines or Text("none yet", style="dim"), title="Recent events", title_align="left")


def log_panel(name: str, lines: list[str], rows: int | None = None) -> Panel:
    """The log's last lines, in a box `rows` lines tall (the rest of the screen) when given."""
    body = Text("\n".join(safe(line, 400) for line in lines) or "no output yet", no_wrap=True, overflow="ellipsis")
    if not lines:
        body.stylize("dim")
    title = f"Log · {safe(name, 60)}" if name else "Log"
    return Panel(body, title=Text(title), title_align="left", height=rows)


def dashboard(snapshot: Snapshot, size: tuple[int, int] | None = None) -> RenderableType:
    """The live view of a run, fitted to a screen of `size` (columns, rows): the header, then the recent events
    and the log's last lines in the rows left (a short or narrow screen gets the key lines only). Without a
    size, everything the snapshot holds."""
    width, height = size or (200, 1000)
    if snapshot.shows_fleet:
        return fleet_dashboard(snapshot, width, height)
    if snapshot.report is None:
        return waiting_view()
    report = snapshot.report
    if layout.compact(width, height):
        return Group(*header.compact(snapshot)[:height])
    facts = header.rows(snapshot, tall=height >= header.TALL)
    parts: list[RenderableType] = [header.title(report), header.facts(facts)]
    if snapshot.fleet_note:
        parts.append(fleet.note(snapshot.fleet_note))
    if report.get("guidance") and report.get("circuitState") == "OPEN":
        for line in strip_terminal_controls(str(report["guidance"])).splitlines():
            parts.append(Text(line, style="red", no_wrap=True, overflow="ellipsis"))
    used = len(parts) - 1 + len(facts)  # one line each: the title, the rows, the guidance
    events, log = snapshot.events, snapshot.log_lines
    room = layout.room_below(used, height)
    shown_events, shown_log = layout.share(room, max(1, len(events)), max(1, len(log)))
    # the log's box takes the rows left, so that it ends on the screen's last line as the log grows
    log_rows = max(3, room - max(1, shown_events) + 2) if size is not None else None
    parts += [
        events_panel(events[len(events) - shown_events :] if shown_events else []),
        log_panel(snapshot.log_name, log[len(log) - shown_log :] if shown_log else [], log_rows),
    ]
    return Group(*parts)


def fleet_dashboard(snapshot: Snapshot, width: int, height: int) -> RenderableType:
    """A parallel run: the fleet (monitor/fleet.py), then the feature's recent events in the rows left."""
    if layout.compact(width, height):
        return Group(*fleet.compact(snapshot)[:height])
    parts, left = fleet.fleet_parts(snapshot, height)
    shown = left - layout.PANEL_BORDERS // 2
    if shown >= 1 and snapshot.events:
        parts.append(events_panel(snapshot.events[-shown:]))
    return Group(*parts)


def waiting_view() -> RenderableType:
    return Text(WAITING_TEXT, style="dim")


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The completion summary (seed 000 UC-5 7a): total iterations, duration, exit reason; plain text."""
    # the run's own measure (the summary line's "wall"); from its two stamps, to the second, for an older ralph's
    given = report.get("durationS")
    seconds = float(given) if isinstance(given, int | float) and not isinstance(given, bool) else None
    if seconds is None or not 0 <= seconds < 10**9:  # status.json can be written by the agent
        seconds = seconds_between(parse_time(report.get("startedAt")), parse_time(report.get("lastUpdated")))
    duration = format_duration(max(0.0, seconds)) if seconds is not None else "unknown"
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
    cost = cost_words(report, None)  # over the run's whole time: it has ended
    spent = " · ".join(part for part in (cost, tokens_text(report)) if part)
    if spent:
        lines.append(f"Spent:      {spent}")
    if report.get("lastMessage"):
        lines.append(f"Agent said: {safe(report['lastMessage'], 600)}")
    if report.get("guidance"):
        lines += [safe(line, 300) for line in str(report["guidance"]).splitlines() if line.strip()]
    return lines


def summary_view(snapshot: Snapshot) -> RenderableType:
    report = snapshot.fleet if snapshot.shows_fleet else snapshot.report
    status = str((report or {}).get("status"))
    lines = fleet.summary_lines(snapshot) if snapshot.shows_fleet else summary_lines(report or {})
    style = "green" if status == "complete" else "yellow" if status == "interrupted" else "red"
    # a fleet's rows keep to one line each, as in `ralph status`
    body = Text("\n".join(lines[1:]), no_wrap=snapshot.shows_fleet, overflow="ellipsis")
    return Panel(body, title=Text(lines[0], style=f"bold {style}"), title_align="left")


def plain_lines(snapshot: Snapshot) -> list[tuple[str, str]]:
    """What a monitor on a pipe prints, as (key, line) pairs: a line is printed when it differs from the last one
    printed under its key. One line for a single loop; the fleet's lines for a parallel run."""
    found = fleet.plain_lines(snapshot) if snapshot.shows_fleet else [("run", plain_line(snapshot))]
    if snapshot.fleet_note:
        found.append(("note", f"note: {safe(snapshot.fleet_note)}"))
    return found


def end_lines(snapshot: Snapshot) -> list[str]:
    """The summary a monitor on a pipe prints once the run is over."""
    return fleet.summary_lines(snapshot) if snapshot.shows_fleet else summary_lines(snapshot.report or {})


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
        parts.append("calls " + calls.split(" · ", 1)[0])
    parts.append(f"circuit {report.get('circuitState') or 'CLOSED'}")
    doing = doing_text(report, snapshot.now)
    if doing is not None and not isinstance(report.get("waiting"), dict):
        parts.append(doing.plain)  # a countdown would change the line every second
    elif isinstance(report.get("waiting"), dict):
        waiting = report["waiting"]
        kind, message = waiting.get("kind"), safe(waiting.get("message"), 120)
        parts.append(
            "waiting for your answer" if kind == "answer" else message if kind == "paused" else f"waiting: {message}"
        )
    return " · ".join(part for part in parts if part)
