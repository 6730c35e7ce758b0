"""How a name that is not among the choices is refused: one line, the nearest choice, and every one."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def nearest(given: str, choices: Sequence[str]) -> str | None:
    """The choice `given` was most likely meant to be, or None when none is close."""
    near = difflib.get_close_matches(given, list(choices), n=1)
    return near[0] if near else None


def not_a_choice(flag: str, given: str, said: str, choices: Sequence[str]) -> str:
    """`FLAG 'given': said; did you mean 'near'? the formats: a, b, c` (no guess when none is close)."""
    near = nearest(given, choices)
    hint = f"did you mean {near!r}? " if near else ""
    return f"{flag} {given!r}: {said}; {hint}the formats: {', '.join(choices)}"


def near_choice(said: str, given: str, choices: Sequence[str], more: str = "") -> str:
    """`said; did you mean 'near'? known: a, b, c[ more]` (no guess when none is close)."""
    near = nearest(given, choices)
    hint = f"; did you mean {near!r}?" if near else ";"
    return f"{said}{hint} known: {', '.join(choices)}{' ' + more if more else ''}"
