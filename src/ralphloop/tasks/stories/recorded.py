"""Which stories the records say are done: state.json, or progress.txt's `[DONE] Story X.Y` lines
(seed 002 rebuilds state.json from them when it is lost)."""

from __future__ import annotations

import os
import re

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object
from ralphloop.files.safe_read import LOG_CAP, read_file

# "[DONE] Story 8.3 - Title - 2026-01-30T..." anywhere on a line; 8.3 must not be the start of 8.30 or 8.3.1.
_PROGRESS_DONE = re.compile(r"\[DONE\] Story (?P<id>\d+\.\d+)(?!\d|\.\d)")
STATE_KEYS = ("completed_stories", "completed_ids")  # seed 002's state.json, then ours


def completed_from_state(state_path: str) -> set[str] | None:
    """The ids state.json records as done (seed 002's completed_stories, our completed_ids); None when
    there is no state.json. A file that exists but cannot be read records nothing."""
    if not os.path.lexists(state_path):
        return None
    data = read_json_object(state_path) or {}
    done: set[str] = set()
    for key in STATE_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            done.update(item for item in value if isinstance(item, str))
    return done


def completed_from_progress(progress_path: str) -> list[str]:
    """Story ids named by `[DONE] Story X.Y` lines of progress.txt, each once, in file order (seed 002's
    rebuild of state.json)."""
    try:
        raw = read_file(progress_path, cap=LOG_CAP) or b""
    except RalphError:  # not a file ralph can read: it records nothing (the run's preflight names it)
        return []
    text = raw.decode("utf-8", errors="replace")
    ids: dict[str, None] = {}
    for match in _PROGRESS_DONE.finditer(text):
        ids.setdefault(match.group("id"))
    return list(ids)


def recorded_done(state_path: str, progress_path: str) -> set[str]:
    """Done according to the records: state.json, or progress.txt only while there is no state.json."""
    from_state = completed_from_state(state_path)
    return from_state if from_state is not None else set(completed_from_progress(progress_path))
