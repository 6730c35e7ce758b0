"""An iteration's log by its number (`ralph logs N`, `ralph analyze N`): which numbers have logs, the one asked for
(a number or `last`), the agent that ran it, and where an archived feature's logs went.

Light like `ralph status` (os, re, json): it reads a folder listing and a few lines of the records.
"""

from __future__ import annotations

import json
import os
import re
import shlex

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object
from ralphloop.files.safe_read import open_regular
from ralphloop.project.paths import (
    FeaturePaths,
    display_path,
    feature_flag,
    find_project_root,
)
from ralphloop.project.resolve import newest_archived, resolve_feature

TYPE_CHECKING = False  # typing costs ~9 ms of import: `ralph logs` must stay fast
if TYPE_CHECKING:
    from collections.abc import Iterator

LAST = "last"
_LOG_NAME = re.compile(r"iteration-(\d+)\.log")
_NUMBER = re.compile(r"\d{1,9}")
_CHUNK = 1024 * 1024


def is_iteration(word: str) -> bool:
    """Whether `word` names an iteration (`7`, `last`) rather than a file."""
    return word == LAST or bool(_NUMBER.fullmatch(word))


def feature(selector: str | None, command: tuple[str, ...] = ("logs",)) -> FeaturePaths:
    """The feature `-f` names (the only one without it), archived ones too: with nothing active, the newest."""
    return resolve_feature(find_project_root(), selector, command=command, archived=True)


def archive_hint(root: str, name: str, command: tuple[str, ...] = ("logs",)) -> str:
    """ "auth was archived, its logs are in .ralph/archive/20260101-120000-auth/logs/: ralph logs -f
    .ralph/archive/20260101-120000-auth" for the newest archive of `name`, or "" when it has none."""
    archived = newest_archived(root, name)
    if archived is None:
        return ""
    folder = display_path(archived.dir, root)
    return (
        f"{name} was archived, its logs are in {folder}/logs/: {shlex.join(['ralph', *command])} {feature_flag(folder)}"
    )


def numbers(paths: FeaturePaths) -> list[int]:
    """The iteration numbers that have a log, in order."""
    try:
        names = os.listdir(paths.logs)
    except OSError:
        return []
    return sorted(int(match[1]) for name in names if (match := _LOG_NAME.fullmatch(name)))


def pick(paths: FeaturePaths, word: str | None, command: tuple[str, ...] = ("logs",)) -> int:
    """The iteration `word` names (None or `last`: the newest with a log); a one-line error naming the logs
    folder and the iterations that have logs when there is no such log."""
    have = numbers(paths)
    where = display_path(paths.logs, os.getcwd()) + os.sep
    if not have:
        hint = archive_hint(paths.project_root, paths.name, command) if paths.is_feature_folder else ""
        raise RalphError(f"no iteration log in {where} yet" + (f" ({hint})" if hint else ""))
    if word is None or word == LAST:
        return have[-1]
    if not _NUMBER.fullmatch(word):
        raise RalphError(f"{word!r}: not an iteration number (a number, or {LAST})")
    number = int(word)
    if number not in have:
        raise RalphError(f"no log for iteration {number} in {where} ({spans(have)})")
    return number


def spans(have: list[int]) -> str:
    """ "iterations 1–5, 7 have logs", "iteration 4 has a log"."""
    if len(have) == 1:
        return f"iteration {have[0]} has a log"
    runs: list[list[int]] = []
    for number in have:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    words = [f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]
    return f"iterations {', '.join(words)} have logs"


def facts(paths: FeaturePaths, number: int) -> dict[str, object]:
    """What the records say of iteration `number`: its metrics line once finished (agent, task_id, outcome ...),
    else the journal of the iteration in flight, else status.json while it runs; {} when none says."""
    line = _metrics_line(paths.metrics, number)
    if line:
        return line
    for path, key in ((paths.journal, "number"), (paths.status, "iteration")):
        try:
            found = read_json_object(path)
        except RalphError:  # the agent can write these files: a bad one says nothing
            found = None
        if found is not None and found.get(key) == number:
            task = found.get("task_id") or found.get("currentStory")
            return {"agent": found.get("agent"), "task_id": task, "outcome": "running"}
    return {}


def _metrics_line(path: str, number: int) -> dict[str, object]:
    """The last metrics line of iteration `number`, read line by line (the file may be large); {} when none."""
    needle = f'"iteration":{number},'.encode()
    found: dict[str, object] = {}
    try:
        fd = open_regular(path, cap=1 << 62, follow=False)
    except RalphError:
        return found
    if fd is None:
        return found
    try:
        for line in lines(fd, limit=_CHUNK):
            if line is None or needle not in line:
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict) and value.get("iteration") == number:
                found = value
    finally:
        os.close(fd)
    return found


def lines(fd: int, *, limit: int) -> Iterator[bytes | None]:
    """The lines of an open file, read a chunk at a time (a log may hold gigabytes): each line without its
    newline; None for a line longer than `limit`, which is skipped rather than held in memory."""
    partial = bytearray()
    skipping = False
    while chunk := os.read(fd, _CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipping:
                skipping = False
                yield None
            else:
                partial += chunk[start:end]
                yield bytes(partial)
                partial.clear()
            start = end + 1
        if not skipping:
            partial += chunk[start:]
            if len(partial) > limit:
                partial.clear()
                skipping = True
    if skipping:
        yield None
    elif partial:
        yield bytes(partial)
