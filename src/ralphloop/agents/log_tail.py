"""The last readable lines of an iteration log, for the monitor's log pane and `ralph serve`'s log tails: each line
read through its backend's reader (as `ralph logs` reads it), only the end of the file read, and never a file
outside the feature's logs/ folder. Light (os and the readers): the monitor and `ralph serve` load it.
"""

from __future__ import annotations

import os

from ralphloop.agents.log_readers import log_reader
from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_tail_lines
from ralphloop.project.paths import FeaturePaths

LOG_TAIL_BYTES = 32 * 1024  # enough for a screenful of lines; a huge log is never read whole


def own_log(paths: FeaturePaths, named: object) -> str:
    """The iteration log status.json names, if it is one of this feature's logs; "" otherwise (the
    agent can write status.json: no file outside the feature's logs/ is read)."""
    if not isinstance(named, str) or not named:
        return ""
    logs = os.path.realpath(paths.logs)
    found = os.path.realpath(named)
    return found if os.path.dirname(found) == logs else ""


def log_tail(path: str, count: int, agent: str = "claude") -> list[str]:
    """The last `count` readable lines of an iteration log: the backend's structured output (Claude's
    stream-json) turned into text by its reader, blank lines dropped. Only the last LOG_TAIL_BYTES are read.
    The lines are as the log has them: the caller cleans them for its screen."""
    readable_lines = log_reader(agent)
    try:
        tail = read_tail_lines(path, LOG_TAIL_BYTES) or []
    except RalphError:  # status.json names the log, and the agent can write status.json: show none
        tail = []
    raw = [line.decode("utf-8", "replace").rstrip("\r") for line in tail]
    shown: list[str] = []
    for line in reversed(raw):
        if len(shown) >= count:
            break
        readable = readable_lines(line)
        for part in reversed(readable if readable is not None else [line]):
            if part.strip():
                shown.append(part)
    return shown[:count][::-1]
