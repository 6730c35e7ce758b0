"""Checkboxes in a Markdown table (pure): `| 1.1 | Run the tests | [ ] |` is a task whose text is the row's other
cells, done when its box is ticked (the agent edits that cell). Real plans write a status column so
(tests/fixtures/wild/TESTS.md).

GitHub's table rule: a header row, then a delimiter row with as many cells (`|---|:--:|`), then body rows until a
blank line. A cell is a box only when it holds nothing else: `` `[ ]` `` in backticks is a legend's example, and so
is a row whose only words are a status (`| [ ] | not started |`), wherever its table is.
"""

from __future__ import annotations

import re

from ralphloop.tasks.status_words import only_a_status

_DELIMITER_CELL = re.compile(r"[ \t]*:?-+:?[ \t]*")
_CELL_BREAK = re.compile(r"(?<!\\)\|")  # a pipe, unless escaped (GitHub splits at one even inside a code span)
_BOX = re.compile(r"\[(?P<mark>[ xX])\]")
CELL_JOIN = " | "  # how a row's text cells are joined into the task's text


def cells(line: str) -> list[str]:
    """The cells of a table row, stripped (the outer pipes are optional)."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip() for cell in _CELL_BREAK.split(body)]


def is_row(line: str) -> bool:
    """Whether a line inside a table continues it (a row holds a pipe; anything else ends the table)."""
    return _CELL_BREAK.search(line) is not None


def starts_table(header: str, delimiter: str) -> bool:
    """Whether `delimiter` under `header` makes them a table's head: a pipe, dashes in every cell, as many cells."""
    if not is_row(delimiter) or not is_row(header):
        return False
    rule = cells(delimiter)
    return all(_DELIMITER_CELL.fullmatch(cell) for cell in rule) and len(rule) == len(cells(header))


def row_task(line: str) -> tuple[bool, str] | None:
    """(done, text) of a body row with a checkbox cell; None for a row without one, without text, or a legend's."""
    row = cells(line)
    boxes = [match for cell in row if (match := _BOX.fullmatch(cell))]
    if not boxes:
        return None
    text = CELL_JOIN.join(cell for cell in row if cell and not _BOX.fullmatch(cell))
    if not text or only_a_status(text):
        return None
    # A row with two boxes ("dev | review") is done when both are ticked.
    return all(box.group("mark") != " " for box in boxes), text
