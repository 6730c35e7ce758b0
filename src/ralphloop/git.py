"""What the loop asks of git: a cheap snapshot of the workspace and what changed between two.

One `git status --porcelain=v2 --branch -z -uall` call gives both HEAD and every dirty
or untracked path. GIT_OPTIONAL_LOCKS=0 keeps ralph from fighting the agent's own git.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

_GIT_ENV = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """HEAD (None before the first commit) and each dirty path with its status record."""

    head: str | None
    entries: dict[str, str]


def _git(root: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, capture_output=True, check=False)


def is_repo(root: str) -> bool:
    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").stdout.strip() == b"true"
    except FileNotFoundError:
        return False


def snapshot(root: str, top: str | None = None) -> Snapshot | None:
    """The workspace as git sees it now, or None outside a repository (or without git).

    `top` is the repository's top folder when the caller knows it (saves a git call).
    """
    try:
        done = _git(root, "status", "--porcelain=v2", "--branch", "-z", "-uall")
    except FileNotFoundError:
        return None
    if done.returncode != 0:
        return None
    return _with_file_stamps(top or root, parse_status(done.stdout), known_top=top is not None)


def _with_file_stamps(root: str, snap: Snapshot, *, known_top: bool) -> Snapshot:
    """Add size and mtime to each dirty path: an already-dirty file edited again then counts as changed."""
    top = root if known_top else toplevel(root) if snap.entries else None
    if top is None:
        return snap
    stamped = {}
    for path, record in snap.entries.items():
        try:
            info = os.lstat(os.path.join(top, path))
            stamped[path] = f"{record}|{info.st_size}:{info.st_mtime_ns}"
        except OSError:
            stamped[path] = record
    return Snapshot(head=snap.head, entries=stamped)


def parse_status(raw: bytes) -> Snapshot:
    """Parse `git status --porcelain=v2 --branch -z` output."""
    head: str | None = None
    entries: dict[str, str] = {}
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    index = 0
    while index < len(fields):
        record = fields[index]
        index += 1
        if not record:
            continue
        if record.startswith("# branch.oid "):
            oid = record[len("# branch.oid ") :]
            head = None if oid == "(initial)" else oid
        elif record.startswith("#"):
            continue
        elif record[0] == "1":
            entries[record.split(" ", 8)[8]] = record
        elif record[0] == "2":
            entries[record.split(" ", 9)[9]] = record
            index += 1  # the original path of a rename or copy
        elif record[0] == "u":
            entries[record.split(" ", 10)[10]] = record
        elif record[0] in "?!":
            entries[record[2:]] = record[0]
    return Snapshot(head=head, entries=entries)


def changed_files(root: str, before: Snapshot | None, after: Snapshot | None) -> list[str]:
    """Paths (relative to the repository) changed between two snapshots: committed, staged, dirty or new."""
    if before is None or after is None:
        return []
    changed = {
        path
        for path in before.entries.keys() | after.entries.keys()
        if before.entries.get(path) != after.entries.get(path)
    }
    if after.head and after.head != before.head:
        done = _git(root, "diff", "--name-only", "-z", "--no-renames", before.head or _EMPTY_TREE, after.head)
        changed.update(name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name)
    return sorted(changed)


def toplevel(root: str) -> str | None:
    try:
        done = _git(root, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        return None
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def exclude_paths(root: str, patterns: list[str]) -> bool:
    """Add `patterns` to .git/info/exclude (once each); False when this is not a repository."""
    try:
        done = _git(root, "rev-parse", "--git-path", "info/exclude")
    except FileNotFoundError:
        return False
    if done.returncode != 0:
        return False
    path = os.path.join(root, done.stdout.decode().strip())
    try:
        with open(path, encoding="utf-8") as handle:
            present = set(handle.read().splitlines())
    except FileNotFoundError:
        present = set()
    missing = [pattern for pattern in patterns if pattern not in present]
    if missing:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("\n# ralph runtime files\n" + "".join(f"{p}\n" for p in missing))
    return True
