"""Where each value of a JSON text starts, by its path (`("userStories", 2, "passes")`), so that a problem found in
the parsed value can name its line. Light (no json; re only for a file's problems): `ralph status` reads prd.json
through it."""

from __future__ import annotations

from ralphloop.files.json_text import loads
from ralphloop.words.patterns import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    Path: TypeAlias = tuple[str | int, ...]

# A string, one structural character, or a bare scalar (number, true, false, null). The text is valid JSON (it
# parsed), so no string spans a line and nothing else needs telling apart.
_TOKEN = lazy(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


class _Frame:
    """An object or array being walked: its path, and the member (key) or item (index) now read."""

    __slots__ = ("at", "index", "is_object", "key", "path")

    def __init__(self, path: Path, is_object: bool) -> None:
        self.path = path
        self.is_object = is_object
        self.key: str | None = None  # an object's member key; None while its next key is awaited
        self.at: int = 0  # an array's item index

    def child(self) -> Path:
        return (*self.path, self.key if self.is_object and self.key is not None else self.at)


def value_lines(text: str, depth: int = 3) -> dict[Path, int]:
    """The 1-based line of each value at most `depth` levels deep in the JSON `text`, by its path; an object's
    member is placed at its key's line. A key given twice keeps the line of its first."""
    lines: dict[Path, int] = {}
    frames: list[_Frame] = []
    line, last = 1, 0
    for match in _TOKEN.finditer(text):
        token, start = match.group(), match.start()
        line += text.count("\n", last, start)
        last = start
        top = frames[-1] if frames else None
        if token == ",":
            if top is not None:
                top.key, top.at = None, top.at + (not top.is_object)
        elif token in ("}", "]"):
            frames.pop()
        elif token != ":":
            if top is not None and top.is_object and top.key is None:  # a key
                top.key = loads(token) if "\\" in token else token[1:-1]
                path = top.child()
            else:  # a value: where it starts unless its key placed it already
                path = top.child() if top is not None else ()
            if len(path) <= depth:
                lines.setdefault(path, line)
            if token in ("{", "["):
                frames.append(_Frame(path, token == "{"))
    return lines
