"""spec.md's lines: numbered as an editor shows them, fenced code marked, headings read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*))?$")
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*$")


class Line(Struct, frozen=True):
    """One line of spec.md."""

    number: int  # 1-based, as an editor shows it
    text: str
    code: bool  # inside a fenced code block (fence lines included): never structure


def split_lines(text: str) -> list[str]:
    """The text's lines, without a BOM."""
    # Only CRLF, CR and LF end a line: str.splitlines() would also split on form feeds and U+2028,
    # and the line numbers would then disagree with the user's editor.
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def mark_code(lines: Sequence[str], first_number: int) -> list[Line]:
    """Number the lines and flag those inside fenced code blocks (an unclosed fence runs to the end)."""
    marked: list[Line] = []
    fence = ""
    for offset, text in enumerate(lines):
        number = first_number + offset
        if fence:
            closing = _FENCE_CLOSE.match(text)
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence):
                fence = ""
            marked.append(Line(number, text, code=True))
            continue
        opening = _FENCE_OPEN.match(text)
        # A backtick fence's info string may not hold a backtick (that would be inline code).
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
            marked.append(Line(number, text, code=True))
            continue
        marked.append(Line(number, text, code=False))
    return marked


def atx_heading(line: Line) -> tuple[int, str] | None:
    """(level, text) when the line is an ATX heading outside code."""
    if line.code:
        return None
    match = _HEADING.match(line.text)
    if not match:
        return None
    return len(match["marks"]), without_closing_hashes((match["text"] or "").strip())


def without_closing_hashes(text: str) -> str:
    """A heading's text without its closing run of #s."""
    # `## Title ##` is `Title`, but `C#` keeps its hash: the closing run must follow a space.
    # Done by hand: the obvious regex backtracks quadratically over a long run of spaces.
    bare = text.rstrip("#")
    if bare == text or (bare and bare[-1] not in " \t"):
        return text
    return bare.rstrip()


def section_name(text: str) -> str:
    """A heading or label as compared: case-folded, spaces collapsed, no trailing colon."""
    return " ".join(text.casefold().split()).rstrip(":").strip()
