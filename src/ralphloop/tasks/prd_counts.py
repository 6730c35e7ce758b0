"""What `ralph status` and the run's branch read of a prd.json, light (no json, re or msgspec): its stories'
counts, read afresh, and the branch its `branchName` names (plugins/formats.py's prd row names both)."""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.prd_reading import STORIES, read_prd
from ralphloop.tasks.problem_words import first_of, placed, validate_in

TYPE_CHECKING = False  # typing costs `ralph status` ~2 ms
if TYPE_CHECKING:
    from typing import Any

_BRANCH_KEY = rb'(?<!\\)"branchName"\s*:'  # compiled (with re) by the run alone: `ralph status` counts without it


def story_counts(paths: FeaturePaths) -> tuple[int, int]:
    """Stories passing and in total, from prd.json itself (the truth, even if edited by hand), read as `ralph run`
    reads it: a file it would refuse is refused in its words (the first problem `ralph validate` lists)."""
    stories = _read(paths)[1][STORIES]
    return sum(1 for story in stories if story["passes"]), len(stories)


def branch_named(paths: FeaturePaths) -> tuple[str, str, int] | None:
    """The branch prd.json's branchName names (seed 003), the file, and the line of the key (0 when it cannot be
    found); None when it names none. Raises the file's first problem when it cannot be read."""
    raw, prd = _read(paths)
    wanted = prd.get("branchName")
    if not isinstance(wanted, str) or not wanted.strip():
        return None
    import re

    match = re.search(_BRANCH_KEY, raw)
    return wanted.strip(), paths.prd, raw.count(b"\n", 0, match.start()) + 1 if match else 0


def _read(paths: FeaturePaths) -> tuple[bytes, dict[str, Any]]:
    """prd.json's bytes and its reading in ralph's shape, once; its first problem raised as the run words it."""
    shown = display_path(paths.prd, os.getcwd())  # as run and validate name it
    raw = read_file(paths.prd, shown, cap=TASK_CAP)
    if raw is None:
        raise RalphError(f"{shown}: file not found")
    reading = read_prd(raw)
    if reading.prd is None:
        first = placed(shown, reading.flaws[0].line, reading.flaws[0].message)
        raise RalphError(first_of(first, len(reading.flaws), validate_in(os.path.dirname(shown) or ".")))
    return raw, reading.prd
