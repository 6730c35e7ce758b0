"""Whose runtime file is it: ralph's, or another tool's by the same name in the project's `.ralph/`.

frankbria/ralph-claude-code (seed 000's loop) keeps status.json, .circuit_breaker_state, .circuit_breaker_history,
.exit_signals and .response_analysis in `.ralph/`, where ralph keeps its own for a workspace at the project root,
and some projects commit them. ralph marks its files (`"writer": "ralphloop"` after `schema_version`); an older
ralph's are known by their `schema_version` (every JSON file ralph wrote has begun with it) or, for status.json,
ralph's camelCase fields. When `.ralph/` holds a file by one of these names that is none of these, ralph keeps its
state in `.ralph/.ralphloop/` (paths.FeaturePaths), so it never obeys, shows or rewrites another tool's file; and
it stays there once made, so a later change to the other tool's files never splits ralph's state.

Stdlib only and a few small reads: `ralph status` decides through this where the state is.
"""

from __future__ import annotations

import json
import os
import stat

from ralphloop.files.safe_read import check_folder
from ralphloop.files.schemas import MARK, MARK_KEY, STATUS

OWN_FOLDER = ".ralphloop"  # in .ralph/: a dot name, never taken for a feature (paths.list_features)
SHARED_NAMES = (
    ".circuit_breaker_state",
    "status.json",
    ".exit_signals",
    ".response_analysis",
    ".circuit_breaker_history",
)
FRANKBRIA = "frankbria/ralph-claude-code"
_RALPH_HEAD = b'{\n  "schema_version"'  # how store.atomic_write_json begins every file of ralph's
_CAMEL = frozenset(name for name in STATUS.fields if name != name.lower())
_JUDGE_CAP = 1 << 20  # the other tool's files are a few hundred bytes; a bigger one is left to ralph's readers
# fields only frankbria's files have (ralph took the breaker's and .exit_signals' names from seed 000, its loop)
_FRANKBRIA_FIELDS = frozenset({"loop_count", "calls_made_this_hour", "last_action", "current_loop", "loop_number"})


def is_ralphs(name: str, value: object) -> bool:
    """Whether a JSON value read from ralph's file `name` was written by ralph (marked, or an older ralph's)."""
    if not isinstance(value, dict):
        return False
    if MARK_KEY in value:
        return bool(value[MARK_KEY] == MARK)
    return "schema_version" in value or (name == "status.json" and not _CAMEL.isdisjoint(value))


def others_files(folder: str) -> list[str]:
    """The names in SHARED_NAMES whose file in `folder` is another tool's: a JSON object or array ralph did not
    write. A file that is not JSON at all is left to ralph's readers, which call it damaged (reset-circuit)."""
    found = []
    for name in SHARED_NAMES:
        raw = _small_file(os.path.join(folder, name))
        if raw is None or raw.startswith(_RALPH_HEAD):  # absent, or ralph's own: nothing to parse
            continue
        value = _parse(raw)
        if isinstance(value, (dict, list)) and not is_ralphs(name, value):
            found.append(name)
    return found


def state_folder(ralph_dir: str) -> str:
    """Where ralph keeps the runtime files it would keep in `ralph_dir` (the project's .ralph/): there, or in its
    own `.ralph/.ralphloop/` when another tool's files hold its names (or did when ralph made that folder)."""
    own = os.path.join(ralph_dir, OWN_FOLDER)
    try:
        made = stat.S_ISDIR(os.lstat(own).st_mode)
    except OSError:
        made = False
    return own if made or others_files(ralph_dir) else ralph_dir


def check_state_folder(state_dir: str, label: str) -> None:
    """Refuse (FileRefused, naming `label`) ralph's own `.ralph/.ralphloop/` when it is anything but absent or a real
    folder: a FIFO or a file would end a write in a traceback, a link would put ralph's files outside the project.
    Every command that writes in the state folder (run, reset-circuit, signal) asks this before writing a byte."""
    if os.path.basename(state_dir) == OWN_FOLDER:  # any other state folder is the workspace's, the user's to place
        check_folder(state_dir, label, "its state")


def other_tool(folder: str, names: list[str]) -> str:
    """Who wrote `names` in `folder`, as far as their fields say: frankbria/ralph-claude-code, or another tool."""
    if os.path.lexists(os.path.join(folder, ".call_count")):
        return FRANKBRIA
    for name in names:
        value = _parse(_small_file(os.path.join(folder, name)) or b"")
        if isinstance(value, dict) and not _FRANKBRIA_FIELDS.isdisjoint(value):
            return FRANKBRIA
    return "another tool"


def _small_file(path: str) -> bytes | None:
    """A small regular file's bytes (never through a link, never blocking on a FIFO); None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _JUDGE_CAP:
            return None
        return os.pread(fd, _JUDGE_CAP, 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse(raw: bytes) -> object:
    """The JSON value in `raw`, None when it holds none. Control characters in strings are let through: frankbria's
    status.json can hold a raw newline and colour codes in its exit_reason."""
    try:
        return json.loads(raw, strict=False)
    except (ValueError, RecursionError):
        return None
