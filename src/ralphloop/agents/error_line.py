"""The line of a failed process's output that says why it failed: pure, for every backend's failure reason.

A crashed CLI rarely ends on its reason. Node prints the error, its stack, the error's fields and then its own
version (`Node.js v22.11.0`); Python ends on the exception but a chained one starts with the cause; Rust puts a
panic's message on the line after `panicked at`; a log may end on a note about backtraces. So the first line that
is marked as an error is taken, and the last line only when none is.
"""

from __future__ import annotations

import re

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import strip_terminal_controls

MAX_CHARS = 300

# A line that says it is an error: `Error: …`, `error: …`, `error[E0308]: …` (rustc), `ERROR …`, `FATAL …`,
# `fatal: …` (git), `panic: …` (Go), Rust's `thread 'main' panicked at …`, an exception's `TypeError: …`, and the
# same behind a log line's level in brackets (`[ERROR] …`).
_MARKED = lazy(
    r"""^\[?(?:
        (?:Error|error|Fatal|fatal|panic)(?:\[\w+\])?:
      | (?:ERROR|FATAL|CRITICAL)\b\]?
      | thread\ '[^']*'\ panicked\ at\b
      | Uncaught\ \w*(?:Error|Exception)\b
      | (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?:\ \[\w+\])?:
    )""",
    re.VERBOSE,
)
_TRACEBACK = lazy(r"^Traceback \(most recent call last\):")
_FRAME = lazy(r"^\s+at\s|^\s+\.\.\. \d+ more")  # a Node (or Java) stack frame
# What is never the reason: a runtime's version, advice, npm's chatter, a caret or a brace alone.
_NOISE = lazy(
    r"""^(?:
        Node\.js\ v\d
      | npm\ (?:notice|warn|WARN)\b
      | \(Use\ `node\ --trace
      | \(node:\d+\)\s
      | note:\ run\ with\ `RUST_BACKTRACE
      | goroutine\ \d+\ \[
      | [\^~\s{}()\[\],;]*$
    )""",
    re.VERBOSE,
)


def error_line(text: str) -> str:
    """The line of `text` (a process's stderr or stdout tail) that states why it failed: the first error line (a
    traceback's exception, a panic with its message, the message over a Node stack, a line marked `Error:`,
    `FATAL` ...), else the last line that is not noise, else the last line; "" for blank text. At most MAX_CHARS,
    escapes removed."""
    lines = [line.rstrip() for line in strip_terminal_controls(text).splitlines()]
    lines = [line for line in lines if line.strip()]
    index = 0
    while index < len(lines):
        line = lines[index]
        if _TRACEBACK.match(line.strip()):
            found, index = _exception_after(lines, index + 1)
            if found:
                return _cut(found)
            continue
        if _MARKED.match(line.strip()):
            return _cut(_with_message(lines, index))
        if index + 1 < len(lines) and _FRAME.match(lines[index + 1]) and not _skipped(line):
            return _cut(line.strip())  # the message over a stack trace (an uncaught error without "Error:")
        index += 1
    said = [line.strip() for line in lines if not _skipped(line)]
    if said:
        return _cut(said[-1])
    return _cut(lines[-1].strip()) if lines else ""


def _exception_after(lines: list[str], index: int) -> tuple[str, int]:
    """A Python traceback's exception line (its first line that is not indented, after the frames) and where to
    go on from; ("", the next line) when the text ends inside the frames."""
    while index < len(lines):
        line = lines[index]
        if not line[:1].isspace():
            return line.strip(), index + 1
        index += 1
    return "", index


def _with_message(lines: list[str], index: int) -> str:
    """The marked line, and for Rust's `thread 'main' panicked at src/main.rs:4:5:` the message on the next."""
    line = lines[index].strip()
    if "panicked at" in line and line.endswith(":") and index + 1 < len(lines):
        return f"{line} {lines[index + 1].strip()}"
    return line


def _skipped(line: str) -> bool:
    return bool(_FRAME.match(line) or _NOISE.match(line.strip()))


def _cut(line: str) -> str:
    return line[:MAX_CHARS]


__all__ = ["MAX_CHARS", "error_line"]
