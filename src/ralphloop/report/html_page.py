"""The page of `ralph report --html FILE`: one self-contained HTML file that works offline (plotly.js inlined
once, no link to anything outside it): the summary's numbers, the charts, the receipt and the iterations.

Every text an agent could have written (task ids and titles, outcomes, model names) is cleaned of terminal
escapes by the receipt and HTML-escaped here, so a story titled `<script>…` is shown, never run. Times are the
reader's local time on the page (labelled with their offset); the JSON output keeps UTC.
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from plotly.offline import get_plotlyjs

from ralphloop.records.metrics_text import NOT_REPORTED, clock, format_summary, money, percent
from ralphloop.report import charts
from ralphloop.report.receipt import Receipt, Step, StoryRow, outcome_words
from ralphloop.report.sources import Gathered
from ralphloop.report.text import (
    NO_TASK,
    UNPRICED,
    cache_cell,
    calls_words,
    cost_cell,
    numbers_cells,
    tokens_cell,
    zone_label,
)
from ralphloop.words.figures import calls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import plotly.graph_objects as go

PAGE_ROWS = 1000  # of the iterations' table (the charts keep every one): a page a phone can still open
# No logo, no link to plotly's cloud; resizes with the window (a phone turned sideways).
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}

STYLE = """
:root { --ok:#2e7d32; --open:#5c7cab; --fail:#c62828; --warn:#b7791f; --ink:#1d2330; --muted:#5f6b7a;
        --line:#e3e6eb; --card:#fff; --page:#f4f6f8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--ink);
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 20px 16px 40px; }
h1 { font-size: 1.45rem; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 28px 0 8px; }
.meta, .note { color: var(--muted); font-size: .88rem; margin: 4px 0; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin-top: 16px; }
.card, .chart, .scroll, pre { background: var(--card); border-radius: 8px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
.card { padding: 10px 12px; }
.card .label { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 1.25rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .sub { color: var(--muted); font-size: .82rem; }
.chart { padding: 6px 4px 0; min-height: 200px; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 7px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap;
         vertical-align: top; }
th { font-size: .8rem; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; }
td.title { white-space: normal; min-width: 12em; max-width: 28em; overflow-wrap: anywhere; }
tfoot td { font-weight: 600; border-top: 2px solid var(--line); border-bottom: 0; }
tr.wait td { color: var(--muted); font-style: italic; }
.o { display: inline-block; margin: 1px 6px 1px 0; white-space: nowrap; }
.o.complete { color: var(--ok); } .o.in-progress { color: var(--open); }
.o.failed, .o.refused { color: var(--fail); }
.o.blocked, .o.interrupted, .o.usage-limit, .o.api-error { color: var(--warn); }
pre { padding: 12px; overflow-x: auto; font-size: .85rem; margin: 0; }
@media (max-width: 600px) {
  main { padding: 12px 8px 32px; }
  body { font-size: 14px; }
  th, td { padding: 6px 8px; }
  td.title { min-width: 9em; }
}
"""


def page(got: Gathered, *, budget: float | None, generated: datetime, version: str, notes: list[str]) -> str:
    """The whole page, as text."""
    receipt, done = got.receipt, got.done_word
    unit = {"Stories": "Story", "Tasks": "Task", "Steps": "Step"}.get(got.units, got.units)
    title = f"ralph report: {got.feature}"
    zone = zone_label(receipt)
    sections = [
        f"<header><h1>{escape(title)}</h1>",
        f'<p class="meta">Made {generated.astimezone():%Y-%m-%d %H:%M} ({escape(zone)}) '
        f"by ralphloop {escape(version)} from {escape(got.shown)}</p>",
        *(f'<p class="note">{escape(note)}</p>' for note in notes),
        "</header>",
        _cards(receipt, budget),
        _chart_section(
            "Cost and tokens per iteration",
            "chart-iterations",
            charts.per_iteration(receipt, done),
            "Bars: each agent call's cost, coloured by its outcome. Line: its tokens (input + output); "
            "the legend shows cache reads too.",
        ),
        _chart_section(
            "Spend against the budget" if budget is not None else "Spend",
            "chart-spend",
            charts.cumulative_cost(receipt, budget),
            f"Each run's cost as it grew ({zone}); budget.max_cost_usd is each run's."
            if budget is not None
            else f"Each run's cost as it grew ({zone}); no budget.max_cost_usd is set.",
            missing="No agent reported a cost.",
        ),
        _chart_section(
            "Usage windows",
            "chart-windows",
            charts.usage_windows(receipt),
            f"Each window's share of the agent account as each call read it ({zone}); dashed: your cap "
            "(--max-window, usage_limit.windows).",
            missing="No call reported a usage window (only subscription logins of Claude Code and Codex do).",
        ),
        _chart_section(
            "Timeline",
            "chart-timeline",
            charts.timeline(receipt, done, unit),
            f"A bar per attempt, from its start to its end, and the waits between them ({zone}).",
            missing="No iteration has a time.",
        ),
        f"<h2>{escape(got.units)}: the receipt</h2>",
        '<p class="note">Tokens are input + output; cache reads apart. Agent time is the time the agents ran.</p>',
        _story_table(receipt, got.done_word, unit),
        f"<h2>Iterations ({escape(zone)})</h2>",
        _step_table(receipt, got.done_word, unit),
        "<h2>Summary</h2>",
        f'<pre id="summary">{escape(format_summary(receipt.summary))}</pre>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n"
        f"<script>{get_plotlyjs()}</script>\n</head>\n<body>\n<main>\n"
        + "\n".join(sections)
        + "\n</main>\n</body>\n</html>\n"
    )


def _cards(receipt: Receipt, budget: float | None) -> str:
    s = receipt.summary
    waited = sum(step.seconds for step in receipt.timeline if step.kind == "wait")
    cards = [
        ("Iterations", f"{s.iterations:,}", f"and {calls(s.uncounted)} not counted" if s.uncounted else "counted"),
        ("Success rate", percent(s.success_rate), f"{s.successes:,} of {s.iterations:,} counted"),
        ("Agent time", clock(s.duration_total_s), f"and {clock(waited)} waiting" if waited else ""),
        ("Tokens", tokens_cell(s), f"cache reads {cache_cell(s)}"),
        ("Cost", cost_cell(s), f"budget {charts.dollars(budget)} a run" if budget is not None else "no budget set"),
    ]
    return (
        '<section class="cards">'
        + "".join(
            f'<div class="card"><div class="label">{escape(label)}</div><div class="value">{escape(value)}</div>'
            f'<div class="sub">{escape(sub)}</div></div>'
            for label, value, sub in cards
        )
        + "</section>"
    )


def _chart_section(heading: str, div_id: str, figure: go.Figure | None, note: str, *, missing: str = "") -> str:
    if figure is None:
        return f'<h2>{escape(heading)}</h2>\n<p class="note">{escape(missing)}</p>'
    height = figure.layout.height or 320
    body = figure.to_html(
        full_html=False, include_plotlyjs=False, config=CONFIG, div_id=div_id, default_height=f"{height}px"
    )
    return f'<h2>{escape(heading)}</h2>\n<p class="note">{escape(note)}</p>\n<div class="chart">{body}</div>'


def _outcome(outcome: str, done_word: str, title: str = "") -> str:
    hint = f' title="{escape(title)}"' if title else ""
    return f'<span class="o {escape(outcome)}"{hint}>{escape(outcome_words(outcome, done_word))}</span>'


def _story_row(row: StoryRow, done_word: str) -> str:
    attempts = "".join(
        _outcome(a.outcome, done_word, f"iteration {a.iteration}" + ("" if a.counted else ", not counted"))
        for a in row.attempts
    )
    cells = [
        f"<td>{escape(row.task_id or NO_TASK)}</td>",
        f'<td class="title">{escape(row.title)}</td>',
        f"<td>{attempts}</td>",
        *(f'<td class="num">{escape(v)}</td>' for v in numbers_cells(row.totals)),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _story_table(receipt: Receipt, done_word: str, unit: str) -> str:
    s = receipt.summary
    head = "".join(
        f"<th{' class=num' if n > 2 else ''}>{escape(h)}</th>"
        for n, h in enumerate((unit, "Title", "Attempts", "Agent time", "Tokens", "Cache read", "Cost"))
    )
    total = "".join(f'<td class="num">{escape(v)}</td>' for v in numbers_cells(s))
    note = ""
    if UNPRICED in cost_cell(s):
        note = f'<p class="note">{UNPRICED} some calls reported no cost: the spend is more than shown.</p>'
    return (
        f'<div class="scroll"><table id="stories"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(_story_row(row, done_word) for row in receipt.stories)
        + f"</tbody><tfoot><tr><td>Total</td><td></td><td>{escape(calls_words(s))}</td>{total}</tr></tfoot>"
        + "</table></div>"
        + note
    )


def _step_row(step: Step, done_word: str) -> str:
    at = f"{step.start.astimezone():%m-%d %H:%M:%S}" if step.start is not None else "-"
    if step.kind == "wait":
        return (
            f'<tr class="wait"><td>{at}</td><td></td><td colspan="3">waited {escape(clock(step.seconds))} '
            f"({escape(step.wait_kind)})</td><td></td><td></td></tr>"
        )
    tokens = NOT_REPORTED if step.tokens is None else f"{step.tokens:,}"
    cost = NOT_REPORTED if step.cost_usd is None else money(step.cost_usd)
    counted = "" if step.counted else " (not counted)"
    return (
        f"<tr><td>{at}</td><td class=num>{step.iteration}</td><td>{escape(step.task_id or NO_TASK)}</td>"
        f"<td>{_outcome(step.outcome, done_word)}{escape(counted)}</td>"
        f'<td class="num">{escape(clock(step.seconds))}</td><td class="num">{escape(tokens)}</td>'
        f'<td class="num">{escape(cost)}</td></tr>'
    )


def _step_table(receipt: Receipt, done_word: str, unit: str) -> str:
    head = "".join(
        f"<th{' class=num' if h in ('#', 'Agent time', 'Tokens', 'Cost') else ''}>{escape(h)}</th>"
        for h in ("Start", "#", unit, "Outcome", "Agent time", "Tokens", "Cost")
    )
    shown = receipt.timeline[-PAGE_ROWS:]
    rows = "".join(_step_row(step, done_word) for step in shown)
    table = f'<table id="iterations"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
    left_out = len(receipt.timeline) - len(shown)
    note = f'<p class="note">The last {len(shown):,} of {len(receipt.timeline):,} entries.</p>' if left_out else ""
    return f'{note}<div class="scroll">{table}</div>'
