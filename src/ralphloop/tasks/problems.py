"""Problems found in a task file, each with its place, for `ralph validate` (all of them) and for
`ralph run` (the first one, as its one-line error)."""

from __future__ import annotations

from collections.abc import Sequence

from ralphloop.core.errors import RalphError
from ralphloop.core.problems import Problem
from ralphloop.tasks.problem_words import first_of, validate_in

__all__ = ["Problem", "from_error", "raise_first", "validate_in"]


def raise_first(problems: Sequence[Problem], validate: str | None = None) -> None:
    """Raise the first problem as a RalphError (saying how many more there are, and `validate`, the command that
    lists them all, when given); nothing when empty."""
    if problems:
        raise RalphError(first_of(str(problems[0]), len(problems), validate))


def from_error(error: RalphError, fallback: str) -> Problem:
    """A RalphError's one line as a Problem: `path: message` splits at its first ": ", a message without
    one is placed at `fallback`; either way the problem reads as the error did."""
    where, _, message = str(error).partition(": ")
    return Problem(where, message) if message else Problem(fallback, where)
