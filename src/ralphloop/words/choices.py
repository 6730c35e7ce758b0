"""How a name that is not among the choices is refused: one line, the nearest choice, and every one."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def not_a_choice(flag: str, given: str, said: str, choices: Sequence[str]) -> str:
    """`FLAG 'given': said; did you mean 'near'? the formats: a, b, c` (no guess when none is close)."""
    near = difflib.get_close_matches(given, list(choices), n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return f"{flag} {given!r}: {said}; {hint}the formats: {', '.join(choices)}"


def near_choice(said: str, given: str, choices: Sequence[str], more: str = "") -> str:
    """`said; did you mean 'near'? known: a, b, c[ more]` (no guess when none is close)."""
    near = difflib.get_close_matches(given, list(choices), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ";"
    return f"{said}{hint} known: {', '.join(choices)}{' ' + more if more else ''}"
