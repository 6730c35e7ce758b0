"""The installed distributions' entry points of one group, read the way importlib.metadata reads them (each
`*.dist-info/entry_points.txt` on sys.path, the first distribution of a name winning) but with os alone: importing
importlib.metadata and scanning with it costs ~50 ms, more than a whole `ralph status`, and every command that
looks for a task file in a folder no built-in format knows asks for the plug-in formats.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs `ralph status` ~2 ms
if TYPE_CHECKING:
    from typing import Any

_SUFFIXES = (".dist-info", ".egg-info")
_CAP = 256 * 1024  # an entry_points.txt is a few lines: a bigger one is not read


class EntryPoint:
    """One entry point: its name, what it names ("module:attr"), and the distribution that declares it."""

    __slots__ = ("dist", "name", "value")

    def __init__(self, name: str, value: str, dist: str) -> None:
        self.name = name
        self.value = value
        self.dist = dist  # "ralphloop-tape 0.1.0"

    def load(self) -> Any:
        """What the entry point names, its module imported now."""
        return load(self.value)


def load(target: str) -> Any:
    """What "module:name" names (a dotted name after the colon reaches into the module), the module imported now:
    every part of a plug-in, ralph's own or a third party's, is found this one way."""
    module_name, _, attribute = target.partition(":")
    module_name = module_name.strip()
    __import__(module_name)  # importlib.import_module's work, without importlib's import (warnings')
    found: Any = sys.modules[module_name]
    for part in attribute.strip().split("."):
        if part:
            found = getattr(found, part)
    return found


def entry_points(group: str) -> list[EntryPoint]:
    """Every entry point of `group`, in sys.path's order."""
    return [point for dist in _distributions() for point in dist.get(group, ())]


# The scan, made once a process needs it (a list, not functools.cache: functools' import brings collections, which
# `ralph status` would pay for the plug-in tables it resolves features through)
_SCANNED: list[tuple[dict[str, list[EntryPoint]], ...]] = []


def _distributions() -> tuple[dict[str, list[EntryPoint]], ...]:
    if not _SCANNED:
        _SCANNED.append(_scan())
    return _SCANNED[0]


def _scan() -> tuple[dict[str, list[EntryPoint]], ...]:
    seen: set[str] = set()
    found: list[dict[str, list[EntryPoint]]] = []
    here = os.path.realpath(os.getcwd())
    for folder in sys.path:
        # The working folder (on sys.path under `python -m`) is the project the agent writes: a "distribution" it
        # made there must never be imported into ralph. Plug-ins are installed, in site-packages or a venv's path.
        if not folder or os.path.realpath(folder) == here:
            continue
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not name.endswith(_SUFFIXES):
                continue
            stem = name.rsplit(".", 1)[0]
            dist, _, version = stem.partition("-")
            key = dist.lower().replace("-", "_").replace(".", "_")
            if key in seen:
                continue
            seen.add(key)
            text = _read(os.path.join(folder, name, "entry_points.txt"))
            if text:
                found.append(_parse(text, f"{dist.replace('_', '-')} {version}".strip()))
    return tuple(found)


def _read(path: str) -> str:
    """The file's text; "" when there is none or it is no regular file of a few lines (a FIFO is never opened to
    block on)."""
    from ralphloop.core.errors import RalphError
    from ralphloop.files.safe_read import read_file

    try:
        raw = read_file(path, cap=_CAP)
    except RalphError:
        return ""
    return raw.decode("utf-8", "replace") if raw else ""


def _parse(text: str, dist: str) -> dict[str, list[EntryPoint]]:
    """entry_points.txt's INI sections: `[group]`, then `name = module:attr` lines."""
    groups: dict[str, list[EntryPoint]] = {}
    current: list[EntryPoint] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1].strip(), [])
        elif current is not None and "=" in line:
            name, _, value = line.partition("=")
            current.append(EntryPoint(name.strip(), value.strip(), dist))
    return groups
