"""Regular expressions compiled the first time they are used, not when their module is imported.

The patterns that read an agent's reply and its errors (usage limits, API errors, completion words) are long
alternations: compiling them all costs about 10 ms, which every `ralph run` paid before its first agent call
though none is used before the agent has answered (bench/startup.py, issue 33).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs ~9 ms of import: `ralph status` reads through these patterns
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator
    from typing import Any


class Lazy:
    """`re.compile(pattern, flags)`, made at its first use; the methods ralph uses, with re's own signatures."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str | Callable[[], str], flags: int = 0) -> None:
        self._pattern = pattern  # or what writes it, called at the first use (it may call re.escape)
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        _MADE.append(self)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            import re  # with enum and functools, 4 ms: `ralph status` reads a plain prd.json with no pattern

            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        if not isinstance(self._pattern, str):
            self._pattern = self._pattern()
        return self._pattern

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


_MADE: list[Lazy] = []  # every pattern defined so far, for compile_all


def lazy(pattern: str | Callable[[], str], flags: int = 0) -> Lazy:
    """A pattern compiled at its first use (see Lazy)."""
    return Lazy(pattern, flags)


def compile_all() -> int:
    """Compile every pattern the modules imported so far define: a warm loop process (cli/warm.py) does it ahead,
    while other loops' agents work, so that its loop pays nothing at its first reply. Returns how many."""
    for pattern in _MADE:
        _ = pattern.compiled
    return len(_MADE)
