"""A priority as people write it, read as a number (lower is more urgent): the one reading of story specs'
`priority:` and prd.json's `priority`. Light (re): `ralph status` reads prd.json through it."""

from __future__ import annotations

from ralphloop.words.patterns import lazy

PRIORITY_WORDS = {"critical": 0, "high": 1, "medium": 2, "low": 3}
PRIORITY_FORMS = f"a whole number, P0..P4, or one of {', '.join(PRIORITY_WORDS)}"
_LEVEL = lazy(r"[Pp](?P<level>[0-4])")


def priority_number(text: str) -> int | None:
    """`text` as a priority: a whole number as it is, P0..P4 as 0..4, PRIORITY_WORDS by level (any case);
    None when it is none of them."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    if level := _LEVEL.fullmatch(text):
        return int(level.group("level"))
    return PRIORITY_WORDS.get(text.lower())
