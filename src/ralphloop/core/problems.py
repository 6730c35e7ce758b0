"""A problem found in a file, with its place: what `ralph validate` lists and `ralph run` tells the first of. A
value of the task-source seam (core/protocols.py), so any format, built-in or plug-in, can list its own."""

from __future__ import annotations

from msgspec import Struct

from ralphloop.core.places import placed


class Problem(Struct, frozen=True):
    """One thing wrong in `path` (as shown to the user), at `line` (1-based; 0 when no line applies)."""

    path: str
    message: str
    line: int = 0

    def __str__(self) -> str:
        return placed(self.path, self.line, self.message)
