"""Problems found in a task file, each with its place, for `ralph validate` (all of them) and for
`ralph run` (the first one, as its one-line error)."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from ralphloop.errors import RalphError


class Problem(Struct, frozen=True):
    """One thing wrong in `path` (as shown to the user), at `line` (1-based; 0 when no line applies)."""

    path: str
    message: str
    line: int = 0

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def raise_first(problems: Sequence[Problem]) -> None:
    """Raise the first problem as a RalphError (saying how many more there are); nothing when empty."""
    if not problems:
        return
    more = len(problems) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''}: see ralph validate)" if more else ""
    raise RalphError(f"{problems[0]}{tail}")


def from_error(error: RalphError, fallback: str) -> Problem:
    """A RalphError's one line as a Problem: `path: message` splits at its first ": ", a message without
    one is placed at `fallback`; either way the problem reads as the error did."""
    where, _, message = str(error).partition(": ")
    return Problem(where, message) if message else Problem(fallback, where)
