"""How ralph words a parallel run's fleet (docs/parallel.md), the same in `ralph status` and the monitor: the
coordinator's state, one row per loop (its numbers worded by words/figures.py and words/pace.py, as the loop's own
status words them), the kept worktree of a failed loop with the one command that removes it, and the merge queue.

Pure: the fleet as state/fleet.read_fleet gives it and the moment to word it for. Every value in fleet.json and in
the loops' status files may have been written by an agent: each is cleaned of escapes and kept to one line here.
Stdlib only (`ralph status` uses it).
"""

from __future__ import annotations

from ralphloop.words.figures import iteration_words, money
from ralphloop.words.pace import last_output_words
from ralphloop.words.textsafe import one_line, strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from datetime import datetime
    from typing import Any

# A loop's state at a glance: merged green, on its way (its turn, the queue, the merge, a retry) yellow, failed or
# stopped red, working calm cyan (the monitor's colours, as header.STATUS_STYLES's for a single loop).
STATE_STYLES = {
    "running": "cyan",
    "waiting": "yellow",
    "queued": "yellow",
    "merging": "yellow",
    "retrying": "yellow",
    "merged": "green",
    "failed": "red",
    "stopped": "red",
}
STATE_WIDTH = max(map(len, STATE_STYLES))
_LIVE = ("running", "merging")  # states in which a loop's own process may be at work


def clean(value: object, limit: int = 120) -> str:
    """Text from a fleet or status file as one clean line ("" for nothing)."""
    return one_line(strip_terminal_controls(str(value)), limit) if value not in (None, "") else ""


def cut(line: str, width: int | None) -> str:
    """`line` cut to `width` columns with "…" (never wrapped); whole when the width is unknown (a pipe)."""
    return line if width is None or len(line) <= width else line[: max(0, width - 1)] + "…"


def coordinator_words(fleet: dict[str, Any]) -> str:
    """`running (PID 4242)`, `stopped (… killed?)`, `complete`, `halted: why`."""
    status = clean(fleet.get("status"), 20) or "running"
    if status == "stopped":
        return "stopped (killed?)"
    if status == "running" and fleet.get("alive"):
        pid = fleet.get("pid")
        return f"running (PID {pid})" if _count(pid) else "running"
    message = clean(fleet.get("exitMessage"), 200)
    return f"{status}: {message}" if message else status


def head_words(fleet: dict[str, Any]) -> str:
    """The fleet in one line: its state, stories merged of total, the cost of every loop, how many at once."""
    merged, total = _count(fleet.get("storiesMerged")), _count(fleet.get("storiesTotal"))
    cost, at_once = fleet.get("costUsd"), _count(fleet.get("parallel"))
    parts = [
        coordinator_words(fleet),
        f"{merged} / {total} stories merged",
        money(float(cost)) if isinstance(cost, int | float) and not isinstance(cost, bool) else "",
        f"up to {at_once} loop{'s' if at_once != 1 else ''} at once" if at_once else "",
    ]
    return " · ".join(part for part in parts if part)


class LoopCells:
    """One loop's row as words: story, state, attempt, iteration, cost, what it is doing (each "" when unknown)."""

    __slots__ = ("attempt", "cost", "doing", "iteration", "state", "story")

    def __init__(self, story: str, state: str, attempt: str, iteration: str, cost: str, doing: str) -> None:
        self.story, self.state, self.attempt = story, state, attempt
        self.iteration, self.cost, self.doing = iteration, cost, doing


def loop_cells(loop: dict[str, Any], queue: list[str], now: datetime, *, clock: bool = True) -> LoopCells:
    """A loop's words; `clock`: with how long ago its agent last printed (a line that moves every second, left
    out where a line is printed each time it changes)."""
    report = loop.get("report") if isinstance(loop.get("report"), dict) else None
    attempt, most = _count(loop.get("attempt")), _count(loop.get("maxAttempts"))
    return LoopCells(
        story=clean(loop.get("story"), 40) or "?",
        state=clean(loop.get("state"), STATE_WIDTH),
        attempt=(f"attempt {attempt} of {most}" if most else f"attempt {attempt}") if attempt else "",
        iteration=_iteration(report),
        cost=_cost(report),
        doing=_doing(loop, report, queue, now, clock=clock),
    )


def loop_line(cells: LoopCells, story_width: int, *, labels: bool = True) -> str:
    """`S-2   running   attempt 1 of 3 · iteration 2 / 10 · $0.60 · Bash: pytest -q · last output 12s ago`."""
    iteration = f"iteration {cells.iteration}" if labels and cells.iteration else cells.iteration
    rest = " · ".join(part for part in (cells.attempt, iteration, cells.cost, cells.doing) if part)
    return f"{cells.story:<{story_width}}  {cells.state:<{STATE_WIDTH}}  {rest}".rstrip()


def story_width(loops: list[dict[str, Any]]) -> int:
    return min(20, max((len(clean(loop.get("story"), 40) or "?") for loop in loops), default=1))


def remove_command(worktree: str, branch: str) -> str | None:
    """The one command that removes a failed loop's kept worktree and its branch, quoted to paste; None when a name
    holds what no pasted line can carry (a control character)."""
    if not worktree or not branch or clean(worktree, 4096) != worktree or clean(branch, 4096) != branch:
        return None
    import shlex  # with re: only for a failed loop's line

    return f"git worktree remove --force {shlex.quote(worktree)} && git branch -D {shlex.quote(branch)}"


def queue_words(fleet: dict[str, Any]) -> str:
    """`S-4, S-5 (merged in this order)`, `empty`."""
    queue = [clean(story, 40) for story in fleet.get("queue") or []]
    return f"{', '.join(queue)} (merged in this order)" if queue else "empty"


def fleet_lines(
    fleet: dict[str, Any], now: datetime, adopt: str, *, kept: Collection[str] = (), width: int | None = None
) -> list[str]:
    """`ralph status`'s Fleet block: the coordinator, one row per loop cut to `width`, a failed loop's kept worktree
    (those in `kept`, which exist) with the command that removes it (never cut: it must work when pasted), the queue."""
    lines = [cut(f"Fleet:      {head_words(fleet)}", width)]
    if fleet.get("engine"):  # a run on Temporal (issue 37): where its workflow is
        lines.append(cut(f"Engine:     {clean(fleet.get('engine'), 300)}", width))
    steered = clean(fleet.get("steered")) if fleet.get("status") == "running" else ""
    if steered:  # the user's pause or stop of the whole run (fleet/steering.py)
        lines.append(cut(f"Steered:    {steered}: no new loop starts", width))
    if fleet.get("status") == "stopped":  # a command: never cut
        lines.append(f"Resume:     {adopt}  (adopts the loops, worktrees and queue it left)")
    bring_in = clean(fleet.get("bringIn"), 2000)
    if bring_in:
        lines.append(f"Bring in:   {bring_in}")
    loops = [loop for loop in fleet.get("loops") or [] if isinstance(loop, dict)]
    queue = [str(story) for story in fleet.get("queue") or []]
    wide = story_width(loops)
    for loop in loops:
        lines.append(cut("  " + loop_line(loop_cells(loop, queue, now), wide), width))
        worktree, branch = str(loop.get("worktree") or ""), str(loop.get("branch") or "")
        command = remove_command(worktree, branch) if loop.get("state") == "failed" and worktree in kept else None
        if command:
            pad = " " * (wide + 4)
            lines += [cut(f"{pad}kept: {worktree} (branch {branch}); remove both with:", width), pad + command]
    lines.append(cut(f"Queue:      {queue_words(fleet)}", width))
    return lines


def _iteration(report: dict[str, Any] | None) -> str:
    """The loop's iteration as its own `ralph status` words it (numbers.iteration_words)."""
    if report is None or not _count(report.get("iteration")):
        return ""
    limit = _count(report.get("maxIterations")) or None
    return iteration_words(
        _count(report.get("iteration")),
        _count(report.get("iterationsCounted")),
        _count(report.get("callsNotCounted")),
        limit,
        running=report.get("inIteration") is True,
    )


def _cost(report: dict[str, Any] | None) -> str:
    cost = (report or {}).get("costUsd")
    if not isinstance(cost, int | float) or isinstance(cost, bool) or not 0 <= cost < 10**9:
        return ""
    return money(float(cost))


def _doing(loop: dict[str, Any], report: dict[str, Any] | None, queue: list[str], now: datetime, *, clock: bool) -> str:
    """What the loop does now (its agent's activity or wait, while its process runs), or what it came to."""
    state = loop.get("state")
    if state == "merged":
        commit = clean(loop.get("commit"), 40)
        return f"at {commit[:10]}" if commit else ""
    if state == "queued" and loop.get("story") in queue:
        place = queue.index(str(loop.get("story"))) + 1
        return "next to merge" if place == 1 else f"number {place} in the queue"
    if state in _LIVE and report is not None and report.get("alive"):
        waiting = report.get("waiting")
        said = (
            f"waiting: {clean(waiting.get('message'), 120)}"
            if isinstance(waiting, dict)
            else clean(report.get("activity"), 120)
        )
        age = last_output_words(report, now) if clock else None
        return " · ".join(part for part in (said, age or "") if part)
    return clean(loop.get("note"), 200)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
