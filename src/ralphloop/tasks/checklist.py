"""Markdown checkboxes (`- [ ] task`): the task format of TODO.md and fix_plan.md (pure).

Not a CommonMark parser: it knows just enough block structure to skip the boxes a reader would
not see as tasks (in code fences, HTML comments and block quotes) and to name the headings above
each box. Indented code blocks are not recognised: an indented `- [ ]` is a nested task, which is
what it almost always is in a task list; for the same reason fences count at any indentation (a fence
inside a list item is indented). A fence or comment left open hides the rest of the file, as it does
when the file is rendered: `scan_checklist` reports it, so that a task file cannot look done by accident.

A table row with a checkbox cell is a task too (checklist_table.py); no box right under a legend's heading is one.
The scanner also keeps what a plan written without checkboxes is made of, its plain list items and its headings, for
tasks/bullets.py to name the near miss.
"""

from __future__ import annotations

import re

from msgspec import Struct

from ralphloop.tasks.checklist_table import is_row, row_task, starts_table
from ralphloop.tasks.sections import legend_section

# Only these three: editors and tools agree on them, while Python's splitlines() also breaks at
# \v, \f, \x1c-\x1e, \x85 and U+2028/9, which would shift line numbers away from the user's editor.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MARKER = r"(?:[-*+]|\d{1,9}[.)])"  # a bullet, or an ordered item's number
# GitHub's task list rule: one space, x or X in the brackets, then whitespace or the end of the line;
# so `- [2026-01-29] Fixed`, `- [link](url)` and `- [-]` are plain list items.
_CHECKBOX = re.compile(rf"(?P<indent>[ \t]*){_MARKER}[ \t]+\[(?P<mark>[ xX])\](?:[ \t]+(?P<text>.*))?")
_LIST_ITEM = re.compile(rf"[ \t]*(?P<marker>{_MARKER})(?:[ \t]|$)")
_ATX = re.compile(r" {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*))?")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r" {0,3}(?P<bar>=+|-+)[ \t]*")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_FENCE = re.compile(r"[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)")
_BLOCK_QUOTE = re.compile(r"[ \t]*>")
_BACKTICKS = re.compile(r"`+")


class Item(Struct, frozen=True):
    """One checkbox: where it is, whether it is ticked, its text, and the headings it sits under."""

    line: int  # 1-based
    checked: bool
    text: str  # stripped, HTML comments removed
    heading: str  # the nearest heading above it; "" when none
    headings: tuple[str, ...]  # the whole heading path, outermost first
    indent: int  # leading columns, tabs counted to the next multiple of 4
    in_table: bool = False  # a table row: the agent ticks the box in its cell


class Bullet(Struct, frozen=True):
    """A list item without a checkbox at the top level of its list: what a plan without checkboxes is made of."""

    line: int
    numbered: bool  # `1.` or `1)` rather than `-`, `*` or `+`
    headings: tuple[str, ...]  # the heading path above it
    opens_section: bool  # its list comes straight after a heading, a rule or the file's start, not after prose


class Heading(Struct, frozen=True):
    """A heading and its line."""

    line: int
    title: str


class OpenBlock(Struct, frozen=True):
    """A code fence or HTML comment that is never closed: it hides the rest of the file."""

    line: int
    what: str  # "code fence ```", "HTML comment <!--"


class Checklist(Struct, frozen=True):
    """Every checkbox of a file, and the block left open at its end, if any."""

    items: tuple[Item, ...]
    unclosed: OpenBlock | None
    bullets: tuple[Bullet, ...] = ()
    heading_lines: tuple[Heading, ...] = ()


class _Fence(Struct, frozen=True):
    char: str
    length: int
    line: int


def parse_checklist(text: str) -> list[Item]:
    """Every checkbox with text, in file order."""
    return list(scan_checklist(text).items)


def scan_checklist(text: str) -> Checklist:
    """The checkboxes of `text`, and the code fence or comment it leaves open."""
    lines, unclosed = _visible_lines(_LINE_BREAK.split(text.removeprefix("\ufeff")))
    scan = _Scan()
    for number, visible in enumerate(lines, start=1):
        scan.line(number, visible)
    return Checklist(tuple(scan.items), unclosed, tuple(scan.bullets), tuple(scan.heading_lines))


class _Scan:
    """The block structure read so far, one visible line at a time."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.bullets: list[Bullet] = []
        self.heading_lines: list[Heading] = []
        self.headings: list[tuple[int, str]] = []  # (level, text), outermost first
        self.paragraph: list[str] = []  # an open top-level paragraph: a setext underline makes it a heading
        self.paragraph_line = 0
        self.in_list = False  # after a list item, plain lines continue it until a blank line
        self.list_base: int | None = None  # the indent of the open list's top level; None when no list is open
        self.list_opens_section = False
        self.opener = True  # the next block opens its section: the file's start, or after a heading or a rule
        self.in_table = False

    def line(self, number: int, visible: str | None) -> None:
        if self.in_table and visible is not None and visible.strip() and is_row(visible):
            self._row(number, visible)
            return
        self.in_table = False
        if visible is None or not visible.strip():  # code and HTML end paragraphs as a blank line does
            self.paragraph, self.in_list = [], False
        elif _BLOCK_QUOTE.match(visible):
            # A quoted box is an example or a citation, not a task (the list regexes never match after `>`);
            # nor is a quote heading text: `> x` then `---` is a quote and a rule.
            self._break(opener=False)
        elif heading := _atx(visible):
            self._heading(number, *heading)
        elif self.paragraph and (underline := _SETEXT.fullmatch(visible)):
            title = " ".join(p.strip() for p in self.paragraph)
            self._heading(self.paragraph_line, 1 if underline.group("bar")[0] == "=" else 2, title)
        elif _THEMATIC_BREAK.fullmatch(visible):
            # Without an open paragraph `---` is a rule, not a heading underline.
            self._break(opener=True)
        elif marker := _LIST_ITEM.match(visible):
            self._list_item(number, visible, marker.group("marker"))
        elif self.paragraph and starts_table(self.paragraph[-1], visible):
            self._break(opener=False)
            self.in_table = True
        elif not self.in_list and (self.paragraph or _indent(visible) < 4):
            if self.list_base is not None and _indent(visible) <= self.list_base:
                self.list_base = None  # prose after a blank line, no deeper than the list: the list is over
            if not self.paragraph:
                self.paragraph_line = number
            self.paragraph.append(visible)
            self.opener = False

    def _break(self, *, opener: bool) -> None:
        self.paragraph, self.in_list, self.list_base, self.opener = [], False, None, opener

    def _heading(self, number: int, level: int, title: str) -> None:
        _enter(self.headings, level, title)
        self.heading_lines.append(Heading(number, title))
        self._break(opener=True)

    def _list_item(self, number: int, visible: str, marker: str) -> None:
        indent = _indent(visible)
        if self.list_base is None:
            self.list_base, self.list_opens_section = indent, self.opener
        self.list_base = min(self.list_base, indent)
        self.paragraph, self.in_list, self.opener = [], True, False
        if item := _item(visible, number, self.headings):
            self.items.append(item)
        elif indent == self.list_base and not _CHECKBOX.fullmatch(visible):  # a sub-item is its item's note
            path = tuple(title for _, title in self.headings)
            self.bullets.append(Bullet(number, marker[-1] in ".)", path, self.list_opens_section))

    def _row(self, number: int, visible: str) -> None:
        task = row_task(visible)
        path = tuple(title for _, title in self.headings)
        heading = path[-1] if path else ""
        if task is None or legend_section(heading):
            return
        done, text = task
        self.items.append(Item(number, done, text, heading, path, indent=0, in_table=True))


def _visible_lines(lines: list[str]) -> tuple[list[str | None], OpenBlock | None]:
    """Each line as a reader sees it: None inside a code fence or an HTML block, else without its comments."""
    shown: list[str | None] = []
    fence: _Fence | None = None
    comment_line = 0  # where the open HTML comment started; 0 when none is open
    for number, raw in enumerate(lines, start=1):
        if fence is not None:
            if _closes(raw, fence):
                fence = None
            shown.append(None)
            continue
        if not comment_line and (fence := _opens_fence(raw, number)) is not None:
            shown.append(None)
            continue
        visible, still_open = _strip_comments(raw, in_comment=bool(comment_line))
        # CommonMark: a line that starts an HTML block, or ends one, is all HTML, even after the `-->`.
        html = bool(comment_line) or raw.lstrip(" \t").startswith("<!--")
        shown.append(None if html else visible)
        if not still_open:
            comment_line = 0
        elif not comment_line or "-->" in raw:  # opened on this line (perhaps after closing another)
            comment_line = number
    if fence is not None:
        return shown, OpenBlock(fence.line, f"code fence {fence.char * fence.length}")
    if comment_line:
        return shown, OpenBlock(comment_line, "HTML comment <!--")
    return shown, None


def _item(visible: str, number: int, headings: list[tuple[int, str]]) -> Item | None:
    match = _CHECKBOX.fullmatch(visible)
    if not match or not (text := (match.group("text") or "").strip()):
        return None
    path = tuple(title for _, title in headings)
    if path and legend_section(path[-1]):
        return None  # a legend's example: only the nearest heading says so ("## Legend", then "### Phase 1" is work)
    return Item(
        line=number,
        checked=match.group("mark") != " ",
        text=text,
        heading=path[-1] if path else "",
        headings=path,
        indent=_indent(match.group("indent")),
    )


def _atx(visible: str) -> tuple[int, str] | None:
    match = _ATX.fullmatch(visible)
    if not match:
        return None
    title = _ATX_CLOSE.sub("", match.group("text") or "").strip()
    return len(match.group("hashes")), title


def _enter(headings: list[tuple[int, str]], level: int, title: str) -> None:
    """A heading ends every open section of its level or deeper."""
    while headings and headings[-1][0] >= level:
        headings.pop()
    headings.append((level, title))


def _indent(line: str) -> int:
    spaces = len(line) - len(line.lstrip(" \t"))
    return len(line[:spaces].expandtabs(4))


def _opens_fence(line: str, number: int) -> _Fence | None:
    match = _FENCE.fullmatch(line)
    if not match:
        return None
    fence = match.group("fence")
    # "```code```" on one line is inline code, not a fence: a backtick fence's info string has no backtick.
    if fence[0] == "`" and "`" in match.group("info"):
        return None
    return _Fence(fence[0], len(fence), number)


def _closes(line: str, fence: _Fence) -> bool:
    bar = line.strip(" \t")
    return len(bar) >= fence.length and bar == fence.char * len(bar)


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The line without its HTML comments, and whether a comment is still open at its end."""
    visible: list[str] = []
    pos = 0
    while pos < len(line):
        if in_comment:
            end = line.find("-->", pos)
            if end < 0:
                break
            pos, in_comment = end + 3, False
            continue
        start = _comment_start(line, pos)
        if start < 0:
            visible.append(line[pos:])
            break
        visible.append(line[pos:start])
        # From the second dash, so that `<!-->` and `<!--->` close themselves, as in HTML.
        pos, in_comment = start + 2, True
    return "".join(visible), in_comment


def _comment_start(line: str, pos: int) -> int:
    """Where the next `<!--` outside a code span starts; -1 when there is none.

    A task such as "- [ ] parse `<!--` markers" must not hide the rest of the file."""
    while True:
        opener = line.find("<!--", pos)
        tick = line.find("`", pos, opener if opener >= 0 else len(line))
        if opener < 0 or tick < 0:
            return opener
        run = _BACKTICKS.match(line, tick)
        assert run is not None  # line[tick] is a backtick
        width = run.end() - tick
        closer = re.compile(rf"(?<!`)`{{{width}}}(?!`)").search(line, run.end())
        # An unmatched run of backticks is literal text, not a code span.
        pos = closer.end() if closer else run.end()
