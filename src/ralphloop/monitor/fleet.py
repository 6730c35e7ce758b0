"""The monitor's view of a parallel run (docs/parallel.md): the coordinator, every loop (story, state, attempt,
iteration, cost, what it is doing) and the merge queue, worded by fleet_words as `ralph status` words them.

Pure functions of a Snapshot, drawn with rich like views.py: every value is `Text` made from cleaned text, never
markup, and every line keeps to one line (cut with "…"), so that the screen's layout can count them.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ralphloop.monitor import layout
from ralphloop.monitor.header import STATUS_STYLES
from ralphloop.monitor.snapshot import Snapshot
from ralphloop.words.fleet import STATE_STYLES, clean, fleet_lines, head_words, loop_cells, loop_line, queue_words

_COLUMNS = ("story", "state", "attempt", "iteration", "cost", "doing")


def loops_of(fleet: dict[str, Any]) -> list[dict[str, Any]]:
    return [loop for loop in fleet.get("loops") or [] if isinstance(loop, dict)]


def title(snapshot: Snapshot) -> Text:
    fleet = snapshot.fleet or {}
    feature = clean(fleet.get("feature"), 60) or clean((snapshot.report or {}).get("feature"), 60)
    return Text(f"ralph monitor · {feature} · parallel run", style="bold", no_wrap=True, overflow="ellipsis")


def head(fleet: dict[str, Any]) -> Text:
    """`Fleet  running (PID 42) · 2 / 6 stories merged · $1.20 · up to 3 loops at once`, the state in its colour."""
    words = head_words(fleet)
    status = clean(fleet.get("status"), 20)
    text = Text("Fleet  ", style="bold", no_wrap=True, overflow="ellipsis")
    text.append(words[: len(status)], style=STATUS_STYLES.get(status, ""))
    text.append(words[len(status) :])
    return text


def loops_table(fleet: dict[str, Any], snapshot: Snapshot, rows: int) -> Table:
    """Every loop, one line each, in `rows` lines at most (header and queue included: the loops that do not fit
    are counted on the last line). The columns are as wide as their words; what the loop does takes the rest."""
    loops = loops_of(fleet)
    queue = [str(story) for story in fleet.get("queue") or []]
    room = max(1, rows - 2)  # the header and the queue's line
    shown = loops if len(loops) <= room else loops[: room - 1]
    cells = [loop_cells(loop, queue, snapshot.now) for loop in shown]
    found = [
        (cell.story, cell.state, cell.attempt.removeprefix("attempt "), cell.iteration, cell.cost, cell.doing)
        for cell in cells
    ]
    if len(shown) < len(loops):
        found.append((f"… {len(loops) - len(shown)} more", "", "", "", "", ""))
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
    for index, name in enumerate(_COLUMNS):
        wide = max([len(name), *(len(row[index]) for row in found)])
        if name == "doing":
            table.add_column(name, no_wrap=True, overflow="ellipsis", ratio=1)
        else:
            table.add_column(name, no_wrap=True, overflow="ellipsis", min_width=min(wide, 24), max_width=24)
    for row in found:
        table.add_row(Text(row[0]), Text(row[1], style=STATE_STYLES.get(row[1], "")), *map(Text, row[2:]))
    return table


def panel(snapshot: Snapshot, rows: int) -> Panel:
    """The loops and the queue in a box `rows` lines tall (its borders included)."""
    fleet = snapshot.fleet or {}
    queue = Text(f"queue: {queue_words(fleet)}", no_wrap=True, overflow="ellipsis")
    body = Group(loops_table(fleet, snapshot, rows - layout.PANEL_BORDERS // 2), queue)
    return Panel(body, title="Loops", title_align="left", height=rows)


def wanted_rows(fleet: dict[str, Any]) -> int:
    """The panel's rows to show every loop: its borders, the table's header, one line a loop, the queue."""
    return layout.PANEL_BORDERS // 2 + 1 + len(loops_of(fleet)) + 1


def fleet_parts(snapshot: Snapshot, height: int) -> tuple[list[RenderableType], int]:
    """The fleet's full view in `height` rows: the title, the fleet's line (and why a fleet.json is not read), the
    loops' panel; and how many rows are left below it."""
    fleet = snapshot.fleet or {}
    parts: list[RenderableType] = [title(snapshot), head(fleet)]
    if snapshot.fleet_note:
        parts.append(note(snapshot.fleet_note))
    room = height - len(parts)
    rows = min(wanted_rows(fleet), room)
    parts.append(panel(snapshot, rows))
    return parts, room - rows


def note(text: str) -> Text:
    return Text(clean(text, 300), style="yellow", no_wrap=True, overflow="ellipsis")


def compact(snapshot: Snapshot) -> list[RenderableType]:
    """A narrow or short pane: the fleet in a line, then one line per loop (story and state), then the queue."""
    fleet = snapshot.fleet or {}
    status = clean(fleet.get("status"), 20)
    merged, total = fleet.get("storiesMerged"), fleet.get("storiesTotal")
    first = Text(f"{clean(fleet.get('feature'), 40)} · ", no_wrap=True, overflow="ellipsis")
    first.append(status, style=STATUS_STYLES.get(status, ""))
    first.append(f" · {merged}/{total} merged")
    lines: list[RenderableType] = [first]
    queue = [str(story) for story in fleet.get("queue") or []]
    for loop in loops_of(fleet):
        cells = loop_cells(loop, queue, snapshot.now, clock=False)
        line = Text(f"{cells.story} ", no_wrap=True, overflow="ellipsis")
        line.append(cells.state, style=STATE_STYLES.get(cells.state, ""))
        lines.append(line)
    lines.append(Text(f"queue: {queue_words(fleet)}", no_wrap=True, overflow="ellipsis"))
    return lines


def plain_lines(snapshot: Snapshot) -> list[tuple[str, str]]:
    """The fleet for a monitor on a pipe: (key, line) pairs, each printed when its line changes: the fleet's line,
    each loop's (without clocks, which would change it every second), the queue."""
    fleet = snapshot.fleet or {}
    loops = loops_of(fleet)
    queue = [str(story) for story in fleet.get("queue") or []]
    wide = max((len(clean(loop.get("story"), 40)) for loop in loops), default=1)
    found = [("fleet", f"fleet {head_words(fleet)}")]
    for loop in loops:
        cells = loop_cells(loop, queue, snapshot.now, clock=False)
        found.append((f"loop {cells.story}", loop_line(cells, wide)))
    found.append(("queue", f"queue: {queue_words(fleet)}"))
    return found


def summary_lines(snapshot: Snapshot) -> list[str]:
    """The fleet's end, as `ralph status` words it (its failed loops' kept worktrees with the command that removes
    them are `ralph status`'s: it looks for them on disk)."""
    fleet = snapshot.fleet or {}
    word = clean(fleet.get("status"), 20)
    return [f"The parallel run has ended: {word}", *fleet_lines(fleet, snapshot.now, snapshot.resume)]
