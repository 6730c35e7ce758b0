"""Which files under specs/ are story specs: `specs/epic-<N>/story-<N.M>[-<slug>].md`."""

from __future__ import annotations

import os
import re

from msgspec import Struct

STORY_ID = re.compile(r"\d+\.\d+")
_EPIC_DIR = re.compile(r"epic-(?P<epic>\d+)")  # as strict as detect.py's, which decides this is a stories workspace
_STORY_FILE = re.compile(r"story-(?P<id>\d+\.\d+)(?:-(?P<slug>.+))?\.md")


class SpecFile(Struct, frozen=True):
    """A file whose name and folder make it a story spec."""

    id: str
    slug: str
    epic_dir: str
    epic: int
    path: str
    rel: str


def shown_path(display: str, rel: str) -> str:
    """`rel` (relative to the workspace) as shown to the user: under the workspace's display path."""
    return rel if display in ("", ".") else f"{display.rstrip('/')}/{rel}"


def _subdirs(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return [entry for entry in entries if entry.is_dir()]
    except OSError:
        return []


def _files(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entry.name for entry in entries if not entry.is_dir())  # a FIFO is refused by name
    except OSError:
        return []


def find_spec_files(specs_dir: str) -> list[SpecFile]:
    """Every story spec file under `specs_dir`, epic folders in numeric order, files by name."""
    epics = [(int(m.group("epic")), entry) for entry in _subdirs(specs_dir) if (m := _EPIC_DIR.fullmatch(entry.name))]
    found = []
    for epic, entry in sorted(epics, key=lambda pair: (pair[0], pair[1].name)):
        for name in _files(entry.path):
            match = _STORY_FILE.fullmatch(name)
            if match:
                rel = f"specs/{entry.name}/{name}"
                found.append(
                    SpecFile(
                        match.group("id"),
                        match.group("slug") or "",
                        entry.name,
                        epic,
                        os.path.join(entry.path, name),
                        rel,
                    )
                )
    return found
