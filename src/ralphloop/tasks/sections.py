"""What a checklist heading says about the items under it (pure): optional ideas the loop must not wait for,
or notes that are not work at all.

A heading is read in parts, split where a writer separates a label from a name ("LOW — Nice to have",
"Priority 3: Polish/Nice-to-have", "Emotion (Optional)", "Step 10: Optional - Remove Old Setup"), and a part
must *be* the marker, not merely hold its word: "Future-proof the API", "Optional parameters support" and
"Optional tasks we must do" are work. The words were chosen by reading every heading of 53 real fix plans and
12 TODO.md files (tests/fixtures/wild/TESTS.md). A legend ("## Legend", "### Status key") explains the boxes:
no box under it is a task.
"""

from __future__ import annotations

import functools
import re

# Where a heading's parts meet: a colon, a dash with spaces around it (a hyphen inside a word does not split
# "Future-proof"), a slash, a bar, brackets, a comma. Emoji and markup are dropped with the rest of the punctuation.
_PART_BREAK = re.compile(r"[:/|()\[\],;·•]|\s[-–—]+\s|[–—]")
_NOT_WORD = re.compile(r"[\W_]+")
# A part may start with its position or rank: "Phase 5 Future Enhancements", "P3 Optional polish", "2) Optional".
_LABEL = r"(?:(?:phase|step|stage|part|milestone|sprint|tier|priority|level|section|v)\s?\d+|p\d|\d+|low|lowest)\s"
# The optional markers, as the prompts name them (tasks/fix_plan.py, from here: the agent must say COMPLETE when
# ralph counts the plan done); each is read as a whole part, in any case, in these forms too, and with the few words
# that name what kind of thing it is...
OPTIONAL_MARKERS = ("Optional", "Future", "Nice to Have", "Someday", "Stretch", "Deferred", "Wishlist")
_OTHER_FORMS = ("nice to haves", "someday maybe", "wish list")
_OPTIONAL = (
    rf"(?:{'|'.join(marker.casefold() for marker in OPTIONAL_MARKERS + _OTHER_FORMS)})"
    r"(?:\s(?:enhancements?|work|ideas?|features?|improvements?|plans?|polish|tasks?|items?|extras?|goals?))?"
)
# ... and what may follow it: "Deferred to Phase 2", "Optional for v1", "Nice to have after launch".
_QUALIFIER = r"(?:\s(?:to|until|for|after|in|post|beyond|once|when|if|from)\s.*)?"
_OPTIONAL_PART = re.compile(rf"(?:{_LABEL})*{_OPTIONAL}{_QUALIFIER}")
# The completion rule's words for those sections, the same in every prompt.
OPTIONAL_SECTIONS = (
    "the sections ralph counts as optional (under a heading, or a part of one, that says "
    f'{", ".join(OPTIONAL_MARKERS[:-1])} or {OPTIONAL_MARKERS[-1]}, as "LOW — Nice to have" does)'
)
# A legend, whose boxes show what a mark means: "Legend", "Status legend", "Key", "Status key". Only these: the part
# *is* the legend, as "Map legend" (a feature's section) and "API key rotation" are work.
_LEGEND = r"(?:(?:status|checkbox|checkboxes|box|task|progress|symbols?|marks?)\s)?(?:legend|key)"
_LEGEND_PART = re.compile(_LEGEND)
# Sections of notes, not tasks: "Notes", "Environment Notes", "Core Principles", "Summary of Changes",
# "Completed", "Definition of Done", a legend. Only a plan written without checkboxes asks (tasks/bullets.py).
_NOTES_PART = re.compile(
    r"(?:.*\s)?(?:notes?|rules|conventions|principles|guidelines|references|legend|glossary)(?:\s(?:for|on|about)\s.*)?"
    r"|(?:summary|completed|done|finished|context|background|overview|status|current status|definition of done"
    rf"|changelog|history|resources|links)(?:\sof\s.*)?|{_LEGEND}"
)


def _parts(heading: str) -> list[str]:
    words = (_NOT_WORD.sub(" ", part).strip().casefold() for part in _PART_BREAK.split(heading))
    return [part for part in words if part]


@functools.lru_cache(maxsize=1024)  # called for every item, with the few headings a plan has
def optional_section(heading: str) -> bool:
    """Whether items under `heading` are optional ideas ("## LOW — Nice to have", "Phase 5 Future Enhancements")."""
    return any(_OPTIONAL_PART.fullmatch(part) for part in _parts(heading))


@functools.lru_cache(maxsize=1024)
def notes_section(heading: str) -> bool:
    """Whether `heading` names notes rather than work ("## Notes", "## Completed", "## Core Principles")."""
    return any(_NOTES_PART.fullmatch(part) for part in _parts(heading))


@functools.lru_cache(maxsize=1024)
def legend_section(heading: str) -> bool:
    """Whether `heading` names a legend, whose boxes show what a mark means ("## Legend", "### Status key")."""
    return any(_LEGEND_PART.fullmatch(part) for part in _parts(heading))
