"""YAML frontmatter of Markdown files: split it off, read it with file line numbers, rewrite one field.

Values are composed with PyYAML's BaseLoader, so every scalar stays the string that is written
(`depends_on: [1.10]` is "1.10", never the float 1.1); only YAML's plain null forms become None.
"""

from __future__ import annotations

import json
import re
from typing import TypeAlias

import yaml
from msgspec import Struct

from ralphloop.tasks.problems import Problem

# The C loader is much faster; its marks count characters (not bytes), as the pure-Python one does.
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

_OPEN_FENCE = "---"
_CLOSE_FENCES = ("---", "...")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
# A walk that visits more nodes than this is an alias bomb (or not a frontmatter): refuse it. Nesting
# is bounded too, as the walk recurses.
_MAX_NODES = 10_000
_MAX_DEPTH = 50
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
# Written without quotes by set_field; anything else is written as a double-quoted YAML (JSON) string.
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*(?: [A-Za-z0-9_.\-/]+)*")
# Words another (YAML 1.1) reader would turn into a bool or null: quoted, so the value stays a string.
_SPECIAL_WORDS = frozenset({"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n"})

Value: TypeAlias = "str | list[Value] | dict[str, Value] | None"


class Frontmatter(Struct, frozen=True):
    """The YAML between the fences, where it is in the text, and what follows it."""

    yaml: str  # the raw YAML text, line endings as written
    line: int  # the file line (1-based) of the YAML's first line: the line after the opening ---
    body: str  # everything after the closing fence line
    start: int  # offset in the text where the YAML begins
    end: int  # offset in the text where the closing fence line begins


class Field(Struct, frozen=True):
    """One top-level frontmatter value and where it is written."""

    value: Value
    line: int  # the file line of the value (of the key when the value is empty)
    key_line: int = 0  # the file line of the key
    item_lines: tuple[int, ...] = ()  # for a list: the file line of each item


def _lines(text: str, pos: int) -> list[tuple[int, int, int]]:
    """(start, end without the line break, start of the next line) of each line from `pos`."""
    spans = []
    while pos <= len(text):
        newline = text.find("\n", pos)
        if newline == -1:
            spans.append((pos, len(text), len(text) + 1))
            break
        spans.append((pos, newline, newline + 1))
        pos = newline + 1
    return spans


def _fence(text: str, start: int, end: int) -> str:
    # Trailing blanks and the \r of a CRLF line do not make a fence line something else.
    return text[start:end].rstrip("\r").rstrip(" \t")


def split_frontmatter(text: str) -> Frontmatter | None:
    """The frontmatter of `text`: a first line `---`, the YAML, then a `---` or `...` line; else None.

    A leading byte-order mark is skipped (and kept in the offsets)."""
    first = 1 if text.startswith("\ufeff") else 0
    spans = _lines(text, first)
    if len(spans) < 2 or _fence(text, spans[0][0], spans[0][1]) != _OPEN_FENCE:
        return None
    yaml_start = spans[0][2]
    for start, end, after in spans[1:]:
        if _fence(text, start, end) in _CLOSE_FENCES:
            return Frontmatter(text[yaml_start:start], 2, text[min(after, len(text)) :], yaml_start, start)
    return None


def opens_frontmatter(text: str) -> bool:
    """The first line is `---`: a frontmatter that split_frontmatter did not find was never closed."""
    first = 1 if text.startswith("\ufeff") else 0
    start, end, _ = _lines(text, first)[0]
    return _fence(text, start, end) == _OPEN_FENCE


# ---------------------------------------------------------------- reading


def _compose(fm: Frontmatter) -> yaml.Node | None:
    return yaml.compose(fm.yaml, Loader=_LOADER)


def _yaml_problem(exc: yaml.YAMLError, fm: Frontmatter, path_display: str) -> Problem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or "malformed"
        if "nesting depth" in what:
            # PyYAML >= 6.0.4 refuses deep nesting itself, before our own walk would: one message either way
            return Problem(path_display, f"the frontmatter nests values too deeply ({what})", fm.line)
        context = f" ({exc.context})" if exc.context else ""
        if exc.context and exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            # "while parsing a flow sequence" is found lines later: say where the sequence began.
            context = f" ({exc.context} at line {fm.line + exc.context_mark.line})"
        line = fm.line + mark.line if mark is not None else fm.line
        return Problem(path_display, f"invalid YAML in the frontmatter: {what}{context}", line)
    # Reader errors (a control character, say) carry no line.
    return Problem(path_display, f"invalid YAML in the frontmatter: {exc}", fm.line)


class _Walk:
    """Turns composed nodes into plain values, counting nodes so that aliases cannot blow it up."""

    def __init__(self, fm: Frontmatter, path_display: str) -> None:
        self.fm = fm
        self.path = path_display
        self.problems: list[Problem] = []
        self.visited = 0

    def line(self, node: yaml.Node) -> int:
        return self.fm.line + node.start_mark.line

    def value(self, node: yaml.Node, active: tuple[int, ...] = ()) -> Value:
        self.visited += 1
        if self.visited > _MAX_NODES:
            raise _TooLarge(f"the frontmatter has more than {_MAX_NODES} values")
        if len(active) > _MAX_DEPTH:
            raise _TooLarge(f"the frontmatter nests values more than {_MAX_DEPTH} deep")
        if isinstance(node, yaml.ScalarNode):
            # The plain style is None in pure-Python PyYAML and "" in the C loader.
            return None if not node.style and node.value in _NULLS else str(node.value)
        if id(node) in active:  # an anchor used inside itself
            self.problems.append(Problem(self.path, "a YAML alias refers to itself", self.line(node)))
            return None
        inner = (*active, id(node))
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, inner) for item in node.value]
        result: dict[str, Value] = {}
        for key, item in node.value:
            if not isinstance(key, yaml.ScalarNode):
                self.problems.append(Problem(self.path, "a frontmatter key must be a plain name", self.line(key)))
                continue
            result[str(key.value)] = self.value(item, inner)
        return result

    def field(self, key: yaml.Node, node: yaml.Node) -> Field:
        value = self.value(node)
        items = tuple(self.line(item) for item in node.value) if isinstance(node, yaml.SequenceNode) else ()
        return Field(value, max(self.line(node), self.line(key)), self.line(key), items)


class _TooLarge(Exception):
    pass


def parse_mapping(fm: Frontmatter, path_display: str) -> tuple[dict[str, Field], list[Problem]]:
    """Every top-level key of the frontmatter with its value and file line, and what is wrong with it.

    An empty frontmatter is an empty mapping. Keys given twice are a problem (the last one counts,
    as in every YAML loader)."""
    try:
        root = _compose(fm)
    except yaml.YAMLError as exc:
        return {}, [_yaml_problem(exc, fm, path_display)]
    if root is None:
        return {}, []
    walk = _Walk(fm, path_display)
    if not isinstance(root, yaml.MappingNode):
        return {}, [Problem(path_display, "the frontmatter is not a mapping of `key: value` lines", walk.line(root))]
    fields: dict[str, Field] = {}
    try:
        for key, node in root.value:
            if not isinstance(key, yaml.ScalarNode):
                walk.problems.append(Problem(path_display, "a frontmatter key must be a plain name", walk.line(key)))
                continue
            name = str(key.value)
            if name in fields:
                first = fields[name].key_line
                message = f"{name} is given twice (lines {first} and {walk.line(key)})"
                walk.problems.append(Problem(path_display, message, walk.line(key)))
            fields[name] = walk.field(key, node)
    except _TooLarge as exc:
        return {}, [Problem(path_display, str(exc), fm.line)]
    return fields, walk.problems


# ---------------------------------------------------------------- writing


def _scalar(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.lower() not in _SPECIAL_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid double-quoted YAML scalar


def _newline(text: str, fm: Frontmatter) -> str:
    """The line break of the opening fence line: inserted lines match the file's."""
    return "\r\n" if text[: fm.start].endswith("\r\n") else "\n"


def set_field(text: str, key: str, value: str) -> str:
    """`text` with the top-level frontmatter `key` set to `value`, every other character unchanged.

    The old value (with its quotes) is replaced in place, so comments and line endings stay; an
    absent key is added as the frontmatter's last line. ValueError when there is no frontmatter,
    it is not valid YAML, or the old value is not a one-line scalar (a list, a block, an alias)."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"{key!r} is not a plain frontmatter key")
    fm = split_frontmatter(text)
    if fm is None:
        raise ValueError("no YAML frontmatter (--- ... ---) at the top")
    try:
        root = _compose(fm)
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid YAML in the frontmatter: {exc}") from None
    new = _scalar(value)
    if root is None:
        return text[: fm.end] + f"{key}: {new}{_newline(text, fm)}" + text[fm.end :]
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise ValueError("the frontmatter is not a block of `key: value` lines")
    targets = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key]
    if not targets:
        return text[: fm.end] + f"{key}: {new}{_newline(text, fm)}" + text[fm.end :]
    # From the last to the first, so that the earlier offsets stay valid.
    for key_node, node in reversed(targets):
        if not isinstance(node, yaml.ScalarNode) or node.start_mark.line != node.end_mark.line:
            raise ValueError(f"{key} is not a one-line value")
        if node.start_mark.index < key_node.end_mark.index:  # an alias: its node is written elsewhere
            raise ValueError(f"{key} is a YAML alias")
        begin, end = fm.start + node.start_mark.index, fm.start + node.end_mark.index
        # An empty value sits right after the colon: keep a space between them.
        written = f" {new}" if begin == end and text[begin - 1] == ":" else new
        text = text[:begin] + written + text[end:]
    return text
