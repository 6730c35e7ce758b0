"""The charts of `ralph report --html`, as plotly figures (graph_objects only: no pandas, no numpy): cost and
tokens per iteration, each run's cumulative cost against the budget, and the timeline of attempts and waits.

Plotly is an optional extra (`pip install 'ralphloop[report]'`): this module is imported only by the page's
builder, never by `ralph run` or `ralph status`. Every text that reaches a chart is HTML-escaped here (`esc`):
plotly draws a label's tags (`<b>`, `<a href>`), and a task's title is the agent's to write.
"""

from __future__ import annotations

import html
import itertools
from datetime import datetime

import plotly.graph_objects as go

from ralphloop.records.metrics_text import clock, money
from ralphloop.report.receipt import OUTCOMES, Receipt, Step, outcome_words, when_of
from ralphloop.report.text import NO_TASK
from ralphloop.words.windows import label, percent

# Calm colours that mean something: green done, blue still open, red failed, amber stopped by something else.
COLOURS = {
    "complete": "#2e7d32",
    "in-progress": "#5c7cab",
    "failed": "#c62828",
    "refused": "#d84315",
    "blocked": "#b7791f",
    "interrupted": "#b7791f",
    "usage-limit": "#b7791f",
    "api-error": "#b7791f",
    "wait": "#9aa3ae",
}
OTHER = "#7b8794"
PALETTE = ("#5c7cab", "#2e7d32", "#b7791f", "#8e44ad", "#c62828", "#00838f")  # one per usage window
WAITS_ROW = "waits"
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


def esc(text: str) -> str:
    """Text for a chart: its tags shown as text, never drawn (plotly reads `<b>`, `<a>`, `<br>` in labels)."""
    return html.escape(text, quote=True)


def dollars(value: float) -> str:
    """A budget as the user set it: `$5.00`."""
    return f"${value:,.2f}"


def local(moment: datetime) -> str:
    """A UTC instant as the reader's local wall time, in the form plotly's date axes read."""
    return f"{moment.astimezone():%Y-%m-%d %H:%M:%S}"


def _layout(figure: go.Figure, *, height: int, **more: object) -> go.Figure:
    figure.update_layout(
        template="plotly_white",
        height=height,
        autosize=True,
        margin={"l": 56, "r": 16, "t": 8, "b": 8},
        font={"family": FONT, "size": 12},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},  # above: clear of the date ticks
        hoverlabel={"align": "left"},
        **more,
    )
    return figure


def per_iteration(receipt: Receipt, done_word: str) -> go.Figure:
    """Bars of each iteration's cost (coloured by outcome), its tokens (input + output) as a line on a second
    axis; cache reads, often a hundred times more, as a line hidden until the legend shows it."""
    steps = [step for step in receipt.timeline if step.kind == "iteration"]
    numbers = [step.iteration for step in steps]
    axis = "iteration"
    if any(later <= earlier for earlier, later in itertools.pairwise(numbers)):
        # a parallel run's loops (or runs that began again at 1) number their own: bars would stack on each other
        numbers, axis = list(range(1, len(steps) + 1)), "agent call, in time order"
    hover = [esc(_iteration_words(step, done_word)) for step in steps]
    figure = go.Figure()
    figure.add_trace(
        go.Bar(
            x=numbers,
            y=[step.cost_usd for step in steps],
            name="cost (USD)",
            marker={"color": [COLOURS.get(step.outcome, OTHER) for step in steps]},
            hovertext=hover,
            hoverinfo="text",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=numbers,
            y=[step.tokens for step in steps],
            name="tokens (input + output)",
            mode="lines+markers",
            yaxis="y2",
            line={"color": "#37474f", "width": 2},
            hovertext=hover,
            hoverinfo="text",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=numbers,
            y=[step.cache_read_tokens for step in steps],
            name="cache reads",
            mode="lines",
            yaxis="y2",
            visible="legendonly",
            line={"color": "#8e99a6", "dash": "dot"},
        )
    )
    return _layout(
        figure,
        height=340,
        xaxis={"title": {"text": axis}, "tickmode": "auto", "rangemode": "tozero"},
        yaxis={"title": {"text": "cost (USD)"}, "rangemode": "tozero", "tickprefix": "$"},
        yaxis2={"title": {"text": "tokens"}, "overlaying": "y", "side": "right", "rangemode": "tozero"},
        bargap=0.25,
    )


def cumulative_cost(receipt: Receipt, budget: float | None) -> go.Figure | None:
    """Each run's spend as it grew, against the budget (budget.max_cost_usd is a run's); None when no agent
    reported a cost."""
    if receipt.summary.cost_usd is None:
        return None
    spends: dict[str, tuple[list[str], list[float]]] = {run.run_id: ([], []) for run in receipt.runs}
    for step in receipt.timeline:
        if step.kind == "iteration" and step.end is not None and step.run_id in spends:
            xs, ys = spends[step.run_id]
            xs.append(local(step.end))
            ys.append(round((ys[-1] if ys else 0.0) + (step.cost_usd or 0.0), 6))
    figure = go.Figure()
    ends: list[str] = []
    for index, run in enumerate(receipt.runs, start=1):
        xs, ys = spends[run.run_id]
        if not xs:
            continue
        ends += xs
        started = f" (started {local(run.started)[:16]})" if run.started else ""
        figure.add_trace(
            go.Scatter(x=xs, y=ys, name=esc(f"run {index}{started}"), mode="lines+markers", line={"shape": "hv"})
        )
    if budget is not None and ends:
        figure.add_trace(
            go.Scatter(
                x=[min(ends), max(ends)],
                y=[budget, budget],
                name=f"budget {dollars(budget)} a run",
                mode="lines",
                line={"color": COLOURS["failed"], "dash": "dash"},
            )
        )
    return _layout(
        figure,
        height=300,
        xaxis={"type": "date"},
        yaxis={"title": {"text": "spent this run (USD)"}, "rangemode": "tozero", "tickprefix": "$"},
    )


def usage_windows(receipt: Receipt) -> go.Figure | None:
    """Each usage window's share over time, as the calls read it, with the cap the run set on it (issue 34); None when
    no call reported a window."""
    if not receipt.windows:
        return None
    figure = go.Figure()
    ends: list[str] = []
    for index, window in enumerate(receipt.windows):
        xs = [local(moment) for stamp, _ in window.points if (moment := when_of(stamp)) is not None]
        ys = [round(share * 100, 1) for stamp, share in window.points if when_of(stamp) is not None]
        if not xs:
            continue
        ends += xs
        colour = PALETTE[index % len(PALETTE)]
        name = esc(f"{window.agent} {label(window.window)}")
        figure.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers", line={"color": colour}))
        if window.cap is not None:
            cap = round(window.cap * 100, 1)
            figure.add_trace(
                go.Scatter(
                    x=[min(xs), max(xs)],
                    y=[cap, cap],
                    name=esc(f"{name} cap {percent(window.cap)}"),
                    mode="lines",
                    line={"color": colour, "dash": "dash"},
                )
            )
    if not ends:
        return None
    return _layout(
        figure,
        height=300,
        xaxis={"type": "date"},
        yaxis={"title": {"text": "share of the window used"}, "range": [0, 105], "ticksuffix": "%"},
    )


def timeline(receipt: Receipt, done_word: str, unit: str) -> go.Figure | None:
    """A Gantt chart: a row per task with a bar per attempt (coloured by outcome), and a row of the waits.
    Each bar is outlined, so an attempt of seconds in a run of hours still shows. None without any times."""
    rows = [row.task_id or NO_TASK for row in receipt.stories]
    placed = [(step, step.start, step.end) for step in receipt.timeline if step.start and step.end]
    if not placed:
        return None
    figure = go.Figure()
    by_kind: dict[str, list[tuple[Step, datetime, datetime]]] = {kind: [] for kind in OUTCOMES}
    for item in placed:
        by_kind.setdefault("wait" if item[0].kind == "wait" else item[0].outcome, []).append(item)
    for kind, own in by_kind.items():
        if not own:
            continue
        colour = COLOURS.get(kind, OTHER)
        label = "wait" if kind == "wait" else outcome_words(kind, done_word)
        figure.add_trace(
            go.Bar(
                orientation="h",
                y=[esc(WAITS_ROW if s.kind == "wait" else s.task_id or NO_TASK) for s, _, _ in own],
                base=[local(start) for _, start, _ in own],
                x=[max(0.0, (end - start).total_seconds()) * 1000 for _, start, end in own],
                name=esc(label),
                marker={"color": colour, "line": {"color": colour, "width": 2}},
                hovertext=[esc(_iteration_words(s, done_word)) for s, _, _ in own],
                hoverinfo="text",
            )
        )
    order = [esc(row) for row in rows] + ([WAITS_ROW] if by_kind.get("wait") else [])
    return _layout(
        figure,
        height=max(220, 90 + 28 * len(order)),
        barmode="overlay",
        xaxis={"type": "date"},
        yaxis={
            "title": {"text": esc(unit)},
            "type": "category",
            "categoryorder": "array",
            "categoryarray": order,
            "autorange": "reversed",
            "automargin": True,
        },
    )


def _iteration_words(step: Step, done_word: str) -> str:
    """A bar's hover text: `#3 S-2 · ✗ failed · 2m 10s agent time · $0.2300`, or a wait's kind and length."""
    when = f" · from {local(step.start)[11:]}" if step.start is not None else ""
    if step.kind == "wait":
        return f"waited {clock(step.seconds)} ({step.wait_kind}){when}"
    parts = [f"#{step.iteration} {step.task_id or NO_TASK}", outcome_words(step.outcome, done_word)]
    parts.append(f"{clock(step.seconds)} agent time")
    if step.tokens is not None:
        parts.append(f"{step.tokens:,} tokens")
    if step.cost_usd is not None:
        parts.append(money(step.cost_usd))
    if not step.counted:
        parts.append("not counted")
    return " · ".join(parts) + when
