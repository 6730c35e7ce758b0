"""A work item's status as people write it ("done", "todo", "not started"): the one list of those words, read by
prd.json's plain `status` (tasks/prd_reading.py) and by a checklist's legend (tasks/checklist_table.py). Light (re only
when a pattern is used): `ralph status` reads prd.json through it.
"""

from __future__ import annotations

from ralphloop.words.patterns import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
_NOT_WORD = lazy(r"[\W_]+")
_SEPARATORS = lazy(r"[\s_-]+")
# a story's true/false that says it is done, under another tool's name for `passes`
_DONE_FLAGS = ("done", "complete", "completed", "passed", "passes", "finished", "verified")


def _only_status() -> str:
    """ "= Not started", "To do / in progress", "**Done** ✅", "Complete (verified)": statuses, with what joins them.
    Compiled when a table is first read (~2 ms): `ralph status` reads prd.json through this module without one."""
    import re

    words = "|".join(
        re.escape(word)
        for word in sorted((STATUS_DONE | STATUS_OPEN | _STATUS_ASIDE) - _ALSO_A_TASK, key=len, reverse=True)
    )
    return rf"(?:(?:means|is)\s)?(?:{words})(?:\s(?:or\s|and\s)?(?:{words}))*"


_ONLY_STATUS = lazy(_only_status)


def only_a_status(text: str) -> bool:
    """Whether `text` says nothing but a status ("not started", "= Done ✅"): a legend's line, not a task."""
    words = _NOT_WORD.sub(" ", text).strip().casefold()
    return bool(words) and _ONLY_STATUS.fullmatch(words) is not None


def done_by_words(item: dict[str, Any]) -> bool | None:
    """Whether a story without `passes` is done, as another tool wrote it: `"completed": true`, `"status":
    "todo"`; None when it says nothing plain (a status word neither done nor open: "Phase 2", "skipped")."""
    for key, value in item.items():
        if key.lower() in _DONE_FLAGS and isinstance(value, bool):
            return value
    for key, value in item.items():
        if key.lower() in ("status", "state") and isinstance(value, str):
            word = " ".join(_SEPARATORS.split(value.strip().lower()))
            if word in STATUS_DONE or word in STATUS_OPEN:
                return word in STATUS_DONE
    return None
