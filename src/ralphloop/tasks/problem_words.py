"""How a problem in a file is worded on one line, for every command that tells one (`ralph validate` lists
them, `ralph run` and `ralph status` tell the first). Light (shlex): `ralph status` words prd.json's."""

from __future__ import annotations

from ralphloop.core.places import placed
from ralphloop.project.paths import feature_flag

__all__ = ["first_of", "placed", "validate_in"]


def first_of(first: str, count: int, validate: str | None = None) -> str:
    """The first of `count` problems, saying how many more there are and `validate`, the command that lists them
    all, when given."""
    more = count - 1
    if not more:
        return first
    words = f"and {more} more problem{'s' if more > 1 else ''}"
    return f"{first} ({words}; all of them: {validate})" if validate else f"{first} ({words})"


def validate_in(folder: str) -> str:
    """The `ralph validate` of the workspace in `folder` (as shown from the current folder)."""
    return f"ralph validate {feature_flag(folder)}"
