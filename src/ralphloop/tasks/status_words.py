"""A work item's status as people write it ("done", "todo", "not started"): the one list of those words, read by
prd.json's plain `status` (tasks/prd_reading.py) and by a checklist's legend (tasks/checklist_table.py). Light (re):
`ralph status` reads prd.json through it.
"""

from __future__ import annotations

import re

STATUS_DONE = frozenset(
    {"done", "complete", "completed", "passed", "passing", "pass", "finished", "shipped", "merged", "closed"}
    | {"resolved", "verified", "implemented"}
)
STATUS_OPEN = frozenset(
    {"todo", "to do", "pending", "open", "not started", "planned", "backlog", "ready", "in progress", "wip"}
    | {"started", "blocked", "failed", "failing", "review", "in review", "draft", "new", "not done", "incomplete"}
)
# Where work stands without saying whether it is done: a legend says them, prd.json's reading refuses them (does a
# story "skipped" pass?).
_STATUS_ASIDE = frozenset(
    {"skipped", "cancelled", "canceled", "deferred", "on hold", "waiting", "doing", "ongoing", "partial", "paused"}
    | {"partially done", "not yet started", "not started yet", "n a", "not applicable", "won t do", "wont do"}
)
# Statuses that are also a task's name: a row `| Review | [ ] |` is the step "Review", never a legend's.
_ALSO_A_TASK = frozenset({"review", "draft", "new", "pass"})
_LEGEND_WORDS = sorted((STATUS_DONE | STATUS_OPEN | _STATUS_ASIDE) - _ALSO_A_TASK, key=len, reverse=True)
_WORD = "|".join(re.escape(word) for word in _LEGEND_WORDS)
# "= Not started", "To do / in progress", "**Done** ✅", "Complete (verified)": statuses, with what joins them
_ONLY_STATUS = re.compile(rf"(?:(?:means|is)\s)?(?:{_WORD})(?:\s(?:or\s|and\s)?(?:{_WORD}))*")
_NOT_WORD = re.compile(r"[\W_]+")


def only_a_status(text: str) -> bool:
    """Whether `text` says nothing but a status ("not started", "= Done ✅"): a legend's line, not a task."""
    words = _NOT_WORD.sub(" ", text).strip().casefold()
    return bool(words) and _ONLY_STATUS.fullmatch(words) is not None
