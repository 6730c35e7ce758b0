"""A task as `ralph run --parallel` reads it from a task file's bytes (plugins/formats.py: a format's `tasks_in`)."""

from __future__ import annotations

from msgspec import Struct


class FileTask(Struct, frozen=True):
    """A task as its file lists it, read from the file's bytes at any git version: what `--parallel` plans, starts
    and merges by (a format that can be worked in parallel reads these; plugins/formats.py)."""

    id: str
    title: str
    done: bool
    priority: int  # lower first; a task without one after every task with one
    depends_on: tuple[str, ...]  # ids that must be done (merged) before a loop may start it
    body: str  # everything but its done mark, as one canonical string: must match where the loops start
