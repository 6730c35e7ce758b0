"""The RALPH_STATUS block (seed 000): seven typed fields, read line by line, never by grep.

Two forms are recognised:

    ---RALPH_STATUS---                 RALPH_STATUS:
    STATUS: IN_PROGRESS                  STATUS: COMPLETE
    ...                                  EXIT_SIGNAL: true
    ---END_RALPH_STATUS---

Keys match whole (so TESTS_STATUS is never STATUS), in any case, with `**bold**`, list
dashes and extra spaces tolerated. A value that is not one of the field's values (such as
the template's `IN_PROGRESS | COMPLETE | BLOCKED`) is recorded as invalid and left unset.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from msgspec import Struct, field

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import clean_text

STATUSES = frozenset({"IN_PROGRESS", "COMPLETE", "BLOCKED"})
TEST_STATUSES = frozenset({"PASSING", "FAILING", "NOT_RUN"})
MAX_TEXT = 500
MAX_LINE = 1000  # longer lines are cut before matching: a field line is short

# Upper, lower or title case: three literal searches are ten times faster than one that ignores case.
_MARKS = (lazy("RALPH_STATUS"), lazy("ralph_status"), lazy("Ralph_Status"))
MAX_MARKS = 1000
MAX_BODY_LINES = 100  # a block has seven fields; an unclosed one is read this far at most
# Possessive quantifiers (`*+`) keep a hostile line of dashes or asterisks linear.
_START = lazy(r"^[^\w\n`-]*+-{3,}+[ \t]*+RALPH_STATUS[ \t]*+-{3,}+[^\w\n`]*+$", re.IGNORECASE | re.MULTILINE)
_END = lazy(r"^[^\w\n`-]*+-{3,}+[ \t]*+END_RALPH_STATUS[ \t]*+-{3,}+[^\w\n`]*+$", re.IGNORECASE | re.MULTILINE)
_HEADER = lazy(r"^[ \t>#*\-]*+RALPH_STATUS[ \t*_]*+:[ \t*_]*+$", re.IGNORECASE | re.MULTILINE)
_FIELD = lazy(
    r"^[ \t>*_\-#`]*(?P<key>[A-Za-z][A-Za-z_ ]{0,40}?)[ \t*_`]*:[ \t*_`]*(?P<value>.*?)[ \t*_`.]*$",
)
_INT = lazy(r"^(\d{1,9})\b")
_TRUE = frozenset({"TRUE", "YES", "Y", "1"})
_FALSE = frozenset({"FALSE", "NO", "N", "0"})


class StatusBlock(Struct, frozen=True):
    """One block's fields; None where the field is absent or its value invalid."""

    status: str | None = None
    tasks_completed: int | None = None
    files_modified: int | None = None
    tests_status: str | None = None
    work_type: str | None = None
    exit_signal: bool | None = None
    recommendation: str | None = None
    closed: bool = True
    invalid: tuple[str, ...] = field(default=())


def last_block(text: str, skip: Callable[[str], bool] | None = None) -> tuple[int, StatusBlock, str] | None:
    """The last status block in `text` (either form): where it starts, its fields, and its text.

    Only lines naming RALPH_STATUS are tried, newest first, so a long reply costs one scan."""
    marks = sorted(match.start() for pattern in _MARKS for match in pattern.finditer(text))[-MAX_MARKS:]
    lines = [line for line in (_line_of(text, mark) for mark in marks) if line is not None]
    for index in range(len(lines) - 1, -1, -1):
        line_start, line_end = lines[index]
        if _HEADER.fullmatch(text, line_start, line_end):
            fields = _header_lines(text[line_end + 1 : line_end + 1 + MAX_BODY_LINES * MAX_LINE])
            whole = "\n".join([text[line_start:line_end], *fields])
            if skip is None or not skip(whole):
                return line_start, parse_fields(fields), whole
        if _START.fullmatch(text, line_start, line_end):
            ends = [line for line in lines[index + 1 :] if _END.fullmatch(text, *line)]
            body = text[line_end + 1 : ends[0][0] if ends else len(text)]
            fields = body.split("\n", MAX_BODY_LINES)[:MAX_BODY_LINES]
            whole = text[line_start : ends[0][1] if ends else line_end + 1 + len("\n".join(fields))]
            if skip is None or not skip(whole):
                return line_start, parse_fields(fields, closed=bool(ends)), whole
    return None


def _line_of(text: str, position: int) -> tuple[int, int] | None:
    """The bounds of the line holding `position`; None when it is too long to be a marker line."""
    line_start = text.rfind("\n", max(0, position - MAX_LINE), position) + 1
    line_end = text.find("\n", position, position + MAX_LINE)
    if (line_start == 0 and position > MAX_LINE) or (line_end < 0 and len(text) > position + MAX_LINE):
        return None
    return line_start, len(text) if line_end < 0 else line_end


def only_a_block(text: str) -> bool:
    """Whether `text` (a fenced block's body) holds one status block and nothing else."""
    found = last_block(text)
    return found is not None and text.strip() == found[2].strip()


def _header_lines(rest: str) -> list[str]:
    """The field lines under a `RALPH_STATUS:` header: up to the first blank or other line after them."""
    lines: list[str] = []
    for line in rest.split("\n", MAX_BODY_LINES)[:MAX_BODY_LINES]:
        if not line.strip():
            if lines:
                break
            continue
        if not _FIELD.match(line[:MAX_LINE]):
            break
        lines.append(line)
    return lines


def parse_fields(lines: list[str], *, closed: bool = True) -> StatusBlock:
    values: dict[str, object] = {}
    invalid: list[str] = []
    for line in lines:
        match = _FIELD.match(line[:MAX_LINE].strip())
        if not match:
            continue
        key = re.sub(r"[ _]+", "_", match.group("key").strip()).upper()
        raw = match.group("value").strip()
        name, parsed = _typed(key, raw)
        if name is None:
            continue
        if parsed is None:
            invalid.append(f"{key}: {raw[:80]}")
        else:
            values[name] = parsed
    return StatusBlock(**values, closed=closed, invalid=tuple(invalid))  # type: ignore[arg-type]


def _typed(key: str, raw: str) -> tuple[str | None, object]:
    word = re.sub(r"[ \-]+", "_", raw.strip()).upper()
    if key == "STATUS":
        return "status", word if word in STATUSES else None
    if key == "TESTS_STATUS":
        return "tests_status", word if word in TEST_STATUSES else None
    if key == "EXIT_SIGNAL":
        return "exit_signal", True if word in _TRUE else False if word in _FALSE else None
    if key in ("TASKS_COMPLETED_THIS_LOOP", "TASKS_COMPLETED"):
        return "tasks_completed", _number(raw)
    if key == "FILES_MODIFIED":
        return "files_modified", _number(raw)
    if key == "WORK_TYPE":
        return "work_type", word if re.fullmatch(r"[A-Z][A-Z_]{0,40}", word) else None
    if key == "RECOMMENDATION":
        return "recommendation", clean_text(raw[:MAX_TEXT]) or None
    return None, None


def _number(raw: str) -> int | None:
    match = _INT.match(raw)
    return int(match.group(1)) if match else None
