"""The receipt of a feature's runs, from its metrics lines and the waits in its event log: per task, its attempts
with their outcomes, agent time, tokens and cost; the timeline of iterations and the waits between them; the runs.

Pure (parsed lines in, values out) and shared by `ralph report`'s text, its --json and its --html page. Every
number is `summary.summarize`'s over the task's (or the run's) own lines, so a total row is the summary's total
and the parts add up the way the whole does. Agent-written text (task ids, titles) is cleaned here, once.
Stdlib only at import: `ralph report` stays as light as `ralph status`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ralphloop.records.summary import Summary, is_counted, line_tokens, summarize
from ralphloop.report.windows import WindowSeries, WindowShare, series, shares
from ralphloop.words.textsafe import clean_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

# An outcome's mark and word (events.STATUSES); "complete" takes the format's word: a story passes, a task is done.
OUTCOMES = {
    "complete": ("✓", ""),
    "in-progress": ("·", "still open"),
    "failed": ("✗", "failed"),
    "refused": ("✗", "refused"),
    "blocked": ("⚠", "blocked"),
    "interrupted": ("⚠", "interrupted"),
    "usage-limit": ("⚠", "usage limit"),
    "api-error": ("⚠", "API error"),
    "merge-resolve": ("⚒", "merge conflict call"),  # records.metrics.RESOLVE_OUTCOME
}
TITLE_LIMIT = 200  # a title is a label, not a document


def outcome_words(outcome: str, done_word: str = "passes") -> str:
    """`✓ passes`, `✗ refused`, `⚠ usage limit`; an outcome ralph does not know is shown as it is."""
    mark, word = OUTCOMES.get(outcome, ("?", outcome or "unknown"))
    return f"{mark} {word or done_word}"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One agent call at a task: its iteration number, status word, and whether it counted."""

    iteration: int
    outcome: str
    counted: bool


@dataclass(frozen=True, slots=True)
class StoryRow:
    """One task's line of the receipt: its attempts in order and the totals of their metrics lines."""

    task_id: str
    title: str
    attempts: tuple[Attempt, ...]
    totals: Summary
    windows: tuple[WindowShare, ...] = ()  # its share of each usage window of the agents' accounts (issue 34)

    @property
    def done(self) -> bool:
        return any(attempt.outcome == "complete" for attempt in self.attempts)


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of the timeline: an iteration (its agent time in `seconds`) or a wait (its length). Times are
    UTC; None when the line says none (a hand-written or very old line)."""

    kind: str  # "iteration" | "wait"
    start: datetime | None
    end: datetime | None
    seconds: float
    iteration: int = 0
    task_id: str = ""
    outcome: str = ""
    counted: bool = True
    cost_usd: float | None = None
    tokens: int | None = None  # input + output
    cache_read_tokens: int | None = None
    run_id: str = ""
    wait_kind: str = ""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run's lines (their order in the file): its id (empty for lines written before ids were), when its
    first iteration began, and their totals (the cost a run's budget counts)."""

    run_id: str
    started: datetime | None
    totals: Summary


@dataclass(frozen=True, slots=True)
class Receipt:
    summary: Summary  # every line: the FINAL SUMMARY, and the receipt's total row
    stories: tuple[StoryRow, ...]  # in the order each task was first worked on
    timeline: tuple[Step, ...]  # iterations in order, each wait before the first iteration that ended after it began
    runs: tuple[RunRow, ...]
    windows: tuple[WindowSeries, ...] = ()  # each usage window's readings over time, with the run's cap


def build(
    lines: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]] = (), now: datetime | None = None
) -> Receipt:
    """The receipt of `lines` (as `read_metrics` returns them) and of the event log's lines `events` (oldest
    first); `now` ends a wait still going on."""
    return assemble(lines, waits(events, now))


def assemble(lines: Sequence[Mapping[str, Any]], found: Sequence[Wait]) -> Receipt:
    """The receipt of `lines` with the waits `found` (of one event log or several, as `waits` reads each)."""
    return Receipt(summarize(lines), stories(lines), timeline(lines, found), runs(lines), series(lines))


def stories(lines: Sequence[Mapping[str, Any]]) -> tuple[StoryRow, ...]:
    """A row per task, in the order each was first worked on; lines without a task make one row of their own."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for line in lines:
        grouped.setdefault(_task(line), []).append(line)
    rows = []
    for task_id, own in grouped.items():
        titles = [title for line in own if (title := _text(line.get("task_title"), TITLE_LIMIT))]
        attempts = tuple(
            Attempt(_int(line.get("iteration")), _text(line.get("outcome")) or "unknown", is_counted(line))
            for line in own
        )
        rows.append(StoryRow(task_id, titles[-1] if titles else "", attempts, summarize(own), shares(own)))
    return tuple(rows)


def runs(lines: Sequence[Mapping[str, Any]]) -> tuple[RunRow, ...]:
    """A row per run, in the order of each run's first line (a parallel run's loops interleave theirs); lines
    without a run id (an older ralph's) are one run while they follow each other."""
    grouped: list[tuple[str, list[Mapping[str, Any]]]] = []
    by_id: dict[str, list[Mapping[str, Any]]] = {}
    for line in lines:
        run_id = _text(line.get("run_id"))
        own = by_id.get(run_id) if run_id else (grouped[-1][1] if grouped and not grouped[-1][0] else None)
        if own is None:
            own = []
            grouped.append((run_id, own))
            if run_id:
                by_id[run_id] = own
        own.append(line)
    return tuple(RunRow(run_id, _first_start(own), summarize(own)) for run_id, own in grouped)


@dataclass(frozen=True, slots=True)
class Wait:
    kind: str
    start: datetime
    end: datetime


def waits(events: Iterable[Mapping[str, Any]], now: datetime | None = None) -> list[Wait]:
    """The waits the event log recorded: each from its line's time to its `until`, or to the next line's time
    when that came first (Ctrl+C ended it, or the run was stopped); the last one, that no line followed, to `now`
    when it is not over yet. Lines of any other shape are skipped."""
    found: list[Wait] = []
    open_wait: tuple[str, datetime, datetime] | None = None
    for event in events:
        when = when_of(event.get("time"))
        if when is None:
            continue
        if open_wait is not None:
            kind, start, until = open_wait
            found.append(Wait(kind, start, max(start, min(until, when))))
            open_wait = None
        wait = event.get("wait")
        ends = when_of(wait.get("until")) if isinstance(wait, dict) else None
        if isinstance(wait, dict) and ends is not None:
            open_wait = (_text(wait.get("kind")) or "wait", when, ends)
    if open_wait is not None:
        kind, start, until = open_wait
        found.append(Wait(kind, start, max(start, until if now is None else min(until, now))))
    return found


def timeline(lines: Sequence[Mapping[str, Any]], found: Sequence[Wait] = ()) -> tuple[Step, ...]:
    """The iterations in the file's order, and each wait placed before the first iteration that ended after
    its start (one that no iteration followed comes last). Ends, not starts: the times are whole seconds, and an
    iteration that ended in the second the wait began was the one before it, while an iteration's start is only
    its end less its wall time (a quick one's start can fall in that second too)."""
    steps: list[Step] = []
    pending = sorted(found, key=lambda wait: wait.start)
    for line in lines:
        step = _iteration(line)
        while pending and step.end is not None and pending[0].start < step.end:
            steps.append(_wait(pending.pop(0)))
        steps.append(step)
    steps.extend(_wait(wait) for wait in pending)
    return tuple(steps)


def _iteration(line: Mapping[str, Any]) -> Step:
    end = when_of(line.get("timestamp"))
    agent_s = _seconds(line.get("duration_seconds"))
    wall = line.get("wall_seconds")
    # the line is written when the iteration ends; it began its wall time earlier (older lines: its agent time)
    took = _seconds(wall) if isinstance(wall, (int, float)) and not isinstance(wall, bool) else agent_s
    tokens = line_tokens(line)
    cost = line.get("cost_usd")
    return Step(
        kind="iteration",
        start=_before(end, took),
        end=end,
        seconds=agent_s,
        iteration=_int(line.get("iteration")),
        task_id=_task(line),
        outcome=_text(line.get("outcome")) or "unknown",
        counted=is_counted(line),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        tokens=None if tokens is None else tokens[0] + tokens[1],
        cache_read_tokens=None if tokens is None else tokens[3],
        run_id=_text(line.get("run_id")),
    )


def _before(end: datetime | None, seconds: float) -> datetime | None:
    """When an iteration that ended at `end` after `seconds` began; None when unknown or out of range (the
    metrics file can be written by the agent: a wall time of 1e12 s is not a time)."""
    if end is None or not math.isfinite(seconds):
        return None
    try:
        return end - timedelta(seconds=seconds)
    except OverflowError:
        return None


def _wait(wait: Wait) -> Step:
    return Step("wait", wait.start, wait.end, (wait.end - wait.start).total_seconds(), wait_kind=wait.kind)


def _first_start(lines: Sequence[Mapping[str, Any]]) -> datetime | None:
    return next((step.start for step in map(_iteration, lines) if step.start is not None), None)


def when_of(value: object) -> datetime | None:
    """A record's time ("2026-01-16T12:34:56Z") as an aware UTC datetime; None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):  # not a time, or one out of datetime's range once in UTC
        return None


def iso(moment: datetime | None) -> str | None:
    """UTC ISO-8601 with a Z, to the second (the records' form); None stays None."""
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _task(line: Mapping[str, Any]) -> str:
    return _text(line.get("task_id"), TITLE_LIMIT)


_CLEANED: dict[tuple[str, int], str] = {}  # ids, outcomes and titles repeat on every line of a long file


def _text(value: object, limit: int = 100) -> str:
    """Agent-written text cleaned for every view: no escapes or controls, one line, cut at `limit`."""
    if not isinstance(value, str):
        return ""
    found = _CLEANED.get((value, limit))
    if found is None:
        text = clean_text(value)
        found = _CLEANED[value, limit] = text if len(text) <= limit else text[: limit - 1] + "…"
    return found


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _seconds(value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return 0.0
    return max(0.0, float(value))


# ---------------------------------------------------------------- as JSON (UTC times, as in the files)


def to_json(receipt: Receipt) -> dict[str, Any]:
    """The receipt's stories, timeline and runs as plain JSON (`ralph report --json` adds them to the summary)."""
    return {
        "stories": [_story_json(row) for row in receipt.stories],
        "timeline": [_step_json(step) for step in receipt.timeline],
        "runs": [
            {"run_id": run.run_id or None, "started": iso(run.started), **_numbers_json(run.totals)}
            for run in receipt.runs
        ],
        "windows": [
            {"agent": w.agent, "window": w.window, "cap": w.cap, "points": [list(point) for point in w.points]}
            for w in receipt.windows
        ],
    }


def _story_json(row: StoryRow) -> dict[str, Any]:
    return {
        "id": row.task_id,
        "title": row.title,
        "done": row.done,
        "attempts": [
            {"iteration": attempt.iteration, "outcome": attempt.outcome, "counted": attempt.counted}
            for attempt in row.attempts
        ],
        **_numbers_json(row.totals),
        "windows": [
            {"agent": w.agent, "window": w.window, "share": round(w.share, 4), "partial": w.partial}
            for w in row.windows
        ],
    }


def _numbers_json(s: Summary) -> dict[str, Any]:
    """A part's numbers, rounded as the summary's JSON rounds them."""
    return {
        "iterations": s.iterations,
        "calls_not_counted": s.uncounted,
        "agent_seconds": round(s.duration_total_s, 1),
        "tokens": {
            "input": s.input_tokens,
            "output": s.output_tokens,
            "total": s.total_tokens,
            "cache_creation": s.cache_creation_tokens,
            "cache_read": s.cache_read_tokens,
        },
        "cost_usd": None if s.cost_usd is None else round(s.cost_usd, 6),
        "calls_without_cost": s.iterations + s.uncounted - s.cost_iterations,
    }


def _step_json(step: Step) -> dict[str, Any]:
    base = {"kind": step.kind, "start": iso(step.start), "end": iso(step.end)}
    if step.kind == "wait":
        return {**base, "seconds": round(step.seconds, 1), "wait": step.wait_kind}
    return {
        **base,
        "agent_seconds": round(step.seconds, 1),
        "iteration": step.iteration,
        "task_id": step.task_id,
        "outcome": step.outcome,
        "counted": step.counted,
        "tokens": step.tokens,
        "cache_read_tokens": step.cache_read_tokens,
        "cost_usd": None if step.cost_usd is None else round(step.cost_usd, 6),
        "run_id": step.run_id or None,
    }
