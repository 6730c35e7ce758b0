"""`ralph logs [N|last] [-f F] [--raw]`: an iteration's log as a person reads it.

The backend that ran the iteration (its metrics line, else the journal or status.json while it runs) reads each
line through its catalog reader, as the monitor's log pane does: the agent's words, the tools it used, errors and
the result; `[stderr]` lines and plain text as they are. The log is streamed (it may hold gigabytes), is never
followed as a link nor read when it is not a regular file, and every line is cleaned of terminal escapes.
"""

from __future__ import annotations

import os
import sys

from ralphloop.agents.log_readers import log_reader
from ralphloop.cli import iteration_logs
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import open_regular
from ralphloop.project.paths import display_path
from ralphloop.words.textsafe import strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import BinaryIO

MAX_LINE = 16 * 1024 * 1024  # a longer line (a runaway tool output) is skipped, not held in memory
_NO_CAP = 1 << 62  # an append-only log is streamed: any size


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = iteration_logs.feature(args.feature)
    number = iteration_logs.pick(paths, args.iteration)
    path = paths.iteration_log(number)
    shown = display_path(path, os.getcwd())
    fd = open_regular(path, shown, cap=_NO_CAP, follow=False)  # a FIFO, a device or a link: refused in one line
    if fd is None:  # removed since the listing
        raise RalphError(f"{shown}: no such file")
    out = sys.stdout.buffer
    try:
        if args.raw and not out.isatty():
            _copy(fd, out)  # for a pipe or a file: the bytes as they are
        else:
            facts = iteration_logs.facts(paths, number)
            if not args.raw:
                out.write(strip_terminal_controls(_header(number, facts, shown)).encode("utf-8", "replace") + b"\n\n")
            _show(fd, out, None if args.raw else log_reader(str(facts.get("agent") or "")))
        out.flush()
    finally:
        os.close(fd)
    return 0


def _header(number: int, facts: dict[str, object], shown: str) -> str:
    """ "Iteration 3 (claude, S-2, failed): .ralph/auth/logs/iteration-3.log"."""
    known = ", ".join(str(facts[key]) for key in ("agent", "task_id", "outcome") if facts.get(key))
    return f"Iteration {number}{f' ({known})' if known else ''}: {shown}"


BATCH_CHARS = 1024 * 1024


def _copy(fd: int, out: BinaryIO) -> None:
    while chunk := os.read(fd, 1024 * 1024):
        out.write(chunk)


def _show(fd: int, out: BinaryIO, reader: Callable[[str], list[str] | None] | None) -> None:
    """Each line readable (through `reader`, when given) and clean; runs of blank lines kept to one."""
    blank = True  # no blank line at the top
    shown: list[str] = []
    held = 0  # characters in `shown`: a log of 16 MB lines must not pile up a thousand of them
    for raw in iteration_logs.lines(fd, limit=MAX_LINE):
        line = "[a line of more than 16 MB, not shown]" if raw is None else raw.decode("utf-8", "replace").rstrip("\r")
        readable = reader(line) if reader is not None and raw is not None else None
        for part in readable if readable is not None else [line]:
            text = strip_terminal_controls(part).rstrip()
            if not text and blank:
                continue
            blank = not text
            shown.append(text)
            held += len(text)
        if len(shown) >= 1000 or held >= BATCH_CHARS:  # in batches: one write a line costs more than reading it
            _write(out, shown)
            held = 0
    _write(out, shown)


def _write(out: BinaryIO, lines: list[str]) -> None:
    if lines:
        out.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
        lines.clear()


__all__ = ["command"]
