"""progress.txt (seed 003): an append-only log, one entry per iteration, never truncated."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from ralphloop.files.store import append_text

MAX_FILES_LISTED = 50


class ProgressEntry(Struct, frozen=True):
    """What ralph records about one iteration."""

    iteration: int
    date: str
    story: str
    status: str
    files_changed: Sequence[str]
    learnings: Sequence[str]
    commit: str | None
    agent: str
    notes: Sequence[str] = ()
    marks: Sequence[str] = ()  # seed 002's one-line records: "[FAIL] S-1 - reason - time (attempt 2/3)"


def header(feature: str, started: str) -> str:
    return f"# Progress Log: {feature}\n# Started: {started}\n"


def ensure_header(path: str, feature: str, started: str) -> None:
    """Start the log when it does not exist yet (or is empty); never touch one that has content."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        append_text(path, header(feature, started))


def format_entry(entry: ProgressEntry) -> str:
    lines = [
        "",
        "---",
        f"Iteration: {entry.iteration}",
        f"Date: {entry.date}",
        f"Story: {entry.story}",
        f"Status: {entry.status}",
        "Files Changed:" if entry.files_changed else "Files Changed: (none)",
        *(f"  - {path}" for path in entry.files_changed[:MAX_FILES_LISTED]),
    ]
    if len(entry.files_changed) > MAX_FILES_LISTED:
        lines.append(f"  - ... and {len(entry.files_changed) - MAX_FILES_LISTED} more")
    if entry.learnings:
        lines += ["Learnings:", *(f"  - {text}" for text in entry.learnings)]
    lines.append(f"Commit: {entry.commit or '(none)'}")
    lines.append(f"Agent: {entry.agent}")
    lines += [f"Note: {note}" for note in entry.notes]
    lines += list(entry.marks)
    return "\n".join(lines) + "\n"


def append_entry(path: str, entry: ProgressEntry) -> None:
    """Append one entry in a single fsynced write, after whatever the agent appended itself."""
    append_text(path, format_entry(entry))


class ProgressLog:
    """Subscribes to the engine's events: the log's header when a run starts, an entry per iteration."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, event: object) -> None:
        from ralphloop.core.events import IterationFinished, RunStarted, Steered
        from ralphloop.core.protocols import iso
        from ralphloop.words.durations import format_duration

        if isinstance(event, RunStarted):
            ensure_header(self.path, event.feature, iso(event.started_at))
        elif isinstance(event, Steered) and event.action in ("say", "answer"):
            # the user's words stay in the log the agents read, after the prompt that had them once
            what = "Guidance" if event.action == "say" else "Answer"
            append_text(self.path, f"\n{what} from the user ({event.source}, {iso(event.at)}): {event.text}\n")
        elif isinstance(event, IterationFinished):
            from ralphloop.files.read import tail_has

            if event.recovered and tail_has(self.path, f"Iteration: {event.number}".encode()):
                return  # written before ralph was killed
            result = event.result
            ended = (
                "timed out"
                if result.timed_out
                else "interrupted"
                if result.interrupted and result.exit_code is None
                else "not started"
                if result.exit_code is None
                else f"exit {result.exit_code}"
            )
            signals = [f"signals: {', '.join(event.signals)}"] if event.signals else []
            append_entry(
                self.path,
                ProgressEntry(
                    iteration=event.number,
                    date=iso(event.finished_at),
                    story=f"{event.task_id} - {event.task_title}",
                    status=event.status,
                    files_changed=event.files_changed,
                    learnings=event.learnings,
                    commit=event.commit,
                    agent=f"{event.agent} · {ended} · {format_duration(result.duration_s)}",
                    notes=(*signals, *event.notes, *event.info),
                    marks=marks(event),
                ),
            )


def marks(event: Any) -> tuple[str, ...]:
    """Seed 002's one-line records after an entry: [LEARN] lines in story mode, [FAIL] for a failed attempt."""
    from ralphloop.core.protocols import iso
    from ralphloop.plugins.formats import format_of
    from ralphloop.words.textsafe import one_line

    stories = format_of(event.source_kind).learn_marks
    found = [f"[LEARN] {one_line(text)}" for text in event.learnings] if stories else []
    if event.failure:
        name = f"Story {event.task_id}" if stories else event.task_id
        found.append(
            f"[FAIL] {name} - {one_line(event.failure)} - {iso(event.finished_at)} "
            f"(attempt {event.attempt}/{event.max_retries})"
        )
    return tuple(found)
