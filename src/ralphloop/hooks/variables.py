"""The values a hook can refer to ($ITERATION_TRANSCRIPT, $SPRINT_ID ...) and their substitution into text."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from msgspec import Struct

from ralphloop.words.patterns import lazy

HOOK_VARIABLES = ("ITERATION_TRANSCRIPT", "SPRINT_ID", "ITERATION", "PHASE_ID")

_IDENTIFIER = lazy(r"[A-Za-z_][A-Za-z0-9_]*")


class HookVars(Struct, frozen=True):
    """The values a hook can refer to, for one iteration."""

    transcript: str  # path of the iteration's log
    sprint_id: str
    iteration: int
    phase_id: str

    def values(self) -> dict[str, str]:
        """The values by their variable names, as the environment of a hook."""
        return {
            "ITERATION_TRANSCRIPT": self.transcript,
            "SPRINT_ID": self.sprint_id,
            "ITERATION": str(self.iteration),
            "PHASE_ID": self.phase_id,
        }


@functools.lru_cache(maxsize=32)
def reference_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern for `$NAME` and `${NAME}` of `names`; the name is group `braced` or `bare`."""
    for name in names:
        if not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"not a shell variable name: {name!r}")
    # Longest first, and a name must not be followed by an identifier character: $ITERATION is not
    # the start of $ITERATION_TRANSCRIPT or $ITERATIONS.
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"\$(?:\{{(?P<braced>{alternatives})\}}|(?P<bare>{alternatives})(?![A-Za-z0-9_]))")


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`text` with `$NAME` and `${NAME}` replaced by `values[NAME]`, in one pass (for prompts, never a shell)."""
    if not values:
        return text
    pattern = reference_pattern(tuple(values))
    return pattern.sub(lambda match: values[match.group("braced") or match.group("bare")], text)
