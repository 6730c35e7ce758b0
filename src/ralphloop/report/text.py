"""The receipt for a terminal: the per-task table (its total row the summary's totals, worded as the summary
words them) and the timeline in local time. Pure: values in, lines out."""

from __future__ import annotations

from datetime import datetime

from ralphloop.records.metrics_text import NOT_REPORTED, clock, money
from ralphloop.report.receipt import Receipt, Step, StoryRow, outcome_words
from ralphloop.words.textsafe import one_line
from ralphloop.words.windows import label, percent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ralphloop.records.summary import Summary

NO_TASK = "(no task)"
TIMELINE_SHOWN = 200  # entries on a screen; --json and --html keep every one
UNPRICED = "*"  # beside a cost some of whose calls reported none


def attempts_words(row: StoryRow, done_word: str) -> str:
    """`✗ failed ×2, ✗ refused, ✓ passes`: the outcomes in order, a run of the same one counted."""
    words: list[tuple[str, int]] = []
    for attempt in row.attempts:
        word = outcome_words(attempt.outcome, done_word)
        if words and words[-1][0] == word:
            words[-1] = (word, words[-1][1] + 1)
        else:
            words.append((word, 1))
    return ", ".join(word if count == 1 else f"{word} ×{count}" for word, count in words)


def calls_words(s: Summary) -> str:
    """`6`, or `6 (1 not counted)`: every agent call, and how many did not count as an iteration."""
    calls = s.iterations + s.uncounted
    return f"{calls:,}" + (f" ({s.uncounted:,} not counted)" if s.uncounted else "")


def tokens_cell(s: Summary) -> str:
    return NOT_REPORTED if s.total_tokens is None else f"{s.total_tokens:,}"


def cache_cell(s: Summary) -> str:
    return NOT_REPORTED if s.cache_read_tokens is None else f"{s.cache_read_tokens:,}"


def cost_cell(s: Summary) -> str:
    """The money the summary shows, marked when some calls reported no cost (then it is not the whole spend)."""
    if s.cost_usd is None:
        return NOT_REPORTED
    return money(s.cost_usd) + (UNPRICED if s.cost_iterations < s.iterations + s.uncounted else "")


def story_table(receipt: Receipt, done_word: str, units: str) -> list[str]:
    """The receipt: a row per task, then the total row (the FINAL SUMMARY's own numbers). A column nothing fills
    is left out (no title recorded; an agent that reports no tokens or cost), as the summary leaves it out."""
    s = receipt.summary
    unit = {"Stories": "Story", "Tasks": "Task", "Steps": "Step"}.get(units, units)
    titles = any(row.title for row in receipt.stories)
    cells: list[tuple[str, ...]] = [
        (unit, "Title", "Attempts", "Agent time", "Tokens", "Cache read", "Cost"),
        *(
            (
                row.task_id or NO_TASK,
                one_line(row.title, 40),
                attempts_words(row, done_word),
                *numbers_cells(row.totals),
            )
            for row in receipt.stories
        ),
        ("Total", "", calls_words(s), *numbers_cells(s)),
    ]
    keep = [True, titles, True, True, bool(s.token_iterations), bool(s.token_iterations), bool(s.cost_iterations)]
    shown = [tuple(cell for cell, kept in zip(row, keep, strict=True) if kept) for row in cells]
    lines = [f"{units} (the receipt; tokens are input + output, cache reads apart):", *_columns(shown, sum(keep[3:]))]
    if not s.token_iterations or not s.cost_iterations:
        what = " and ".join(
            word for word, none in (("tokens", not s.token_iterations), ("cost", not s.cost_iterations)) if none
        )
        lines.append(f"  {what.capitalize()}: {NOT_REPORTED} by the agent")
    if s.cost_iterations and any(UNPRICED in row[-1] for row in cells[1:]):
        lines.append(f"  {UNPRICED} some calls reported no cost: the spend is more than shown")
    return lines


def numbers_cells(s: Summary) -> tuple[str, str, str, str]:
    """Agent time, tokens (input + output), cache reads and cost: the receipt's numbers, as the summary words them."""
    return clock(s.duration_total_s), tokens_cell(s), cache_cell(s), cost_cell(s)


def _columns(rows: list[tuple[str, ...]], numbers: int) -> list[str]:
    """Rows as aligned columns: text on the left, the last `numbers` columns on the right."""
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    first_number = len(widths) - numbers
    return [
        "  "
        + "  ".join(
            cell.rjust(width) if index >= first_number else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def zone_label(receipt: Receipt) -> str:
    """`local time, UTC+01:00`: the offset of the first time shown (this machine's zone)."""
    first = next((step.start for step in receipt.timeline if step.start is not None), None)
    if first is None:
        return "local time"
    zone = first.astimezone().strftime("%z")
    return f"local time, UTC{zone[:3]}:{zone[3:]}"


def timeline_lines(receipt: Receipt, done_word: str, *, last: int = TIMELINE_SHOWN, everything: str = "") -> list[str]:
    """The timeline in local time: a day line when the date changes, then one line per iteration or wait; only
    the `last` entries, with a line naming the command (`everything`) that shows them all when some are left out."""
    steps = receipt.timeline[-last:]
    if not steps:
        return []
    lines = [f"Timeline ({zone_label(receipt)}; agent time per iteration):"]
    left_out = len(receipt.timeline) - len(steps)
    if left_out:
        lines.append(f"  (the last {len(steps):,} of {len(receipt.timeline):,} entries; {everything} has them all)")
    task_width = max((len(step.task_id or NO_TASK) for step in steps if step.kind == "iteration"), default=0)
    outcome_width = max((len(outcome_words(step.outcome, done_word)) for step in steps), default=0)
    number_width = max(4, *(len(str(step.iteration)) for step in steps))
    day = ""
    for step in steps:
        local = step.start.astimezone() if step.start is not None else None
        if local is not None and f"{local:%Y-%m-%d}" != day:
            day = f"{local:%Y-%m-%d}"
            lines.append(f"  {local:%a %d %b %Y}")
        lines.append("  " + _step_line(step, local, (number_width, task_width, outcome_width), done_word))
    return lines


def _step_line(step: Step, local: datetime | None, widths: tuple[int, int, int], done_word: str) -> str:
    number_width, task_width, outcome_width = widths
    at = f"{local:%H:%M:%S}" if local is not None else "--:--:--"
    if step.kind == "wait":
        return f"{at}  waited {clock(step.seconds)} ({step.wait_kind})"
    task = (step.task_id or NO_TASK).ljust(task_width)
    outcome = outcome_words(step.outcome, done_word).ljust(outcome_width)
    cost = "" if step.cost_usd is None else f"  {money(step.cost_usd)}"
    return f"{at}  #{step.iteration:<{number_width}} {task}  {outcome}  {clock(step.seconds):>8}{cost}".rstrip()


def receipt_text(receipt: Receipt, done_word: str, units: str, everything: str) -> str:
    """The table, each task's share of the usage windows, and the timeline, a blank line between them; `everything`:
    the command that shows every entry."""
    shares = window_lines(receipt)
    return "\n".join(
        [
            *story_table(receipt, done_word, units),
            *(["", *shares] if shares else []),
            "",
            *timeline_lines(receipt, done_word, everything=everything),
        ]
    )


def window_lines(receipt: Receipt) -> list[str]:
    """`S-1   claude 5-hour +12%, weekly +2%`: what each task spent of each usage window its agent's account reported
    ("at least" where a call had no earlier reading to compare with); [] when no call reported a window."""
    rows = [(row.task_id or NO_TASK, row.windows) for row in receipt.stories if row.windows]
    if not rows:
        return []
    width = max(len(task) for task, _ in rows)
    lines = ["Usage windows spent (each call's rise in the share its account reported; other use between counts too):"]
    for task, windows in rows:
        by_agent: dict[str, list[str]] = {}
        for w in windows:
            by_agent.setdefault(w.agent, []).append(f"{label(w.window)} {'≥ ' if w.partial else ''}+{percent(w.share)}")
        said = "; ".join(f"{agent} {', '.join(parts)}" for agent, parts in by_agent.items())
        lines.append(f"  {task.ljust(width)}  {said}")
    return lines
