"""What workspace captures remember between calls, so that the next one starts as few git processes as it can.

A capture (captures.capture) keeps the workspace in a private index. Between two captures, one `git status`
against that index, with git's untracked cache kept in it, lists what changed: only those paths are
added again, and with nothing changed the tree is the one written last time. The user's own index is
written as a tree again only when its file changed (git replaces that file whenever it writes it).

A memo is valid while only this process writes its private index; the run's lock on the feature
makes it so. Anything unexpected falls back to the full `git add -A`, which needs no memo.
"""

from __future__ import annotations

import os

from msgspec import Struct

from ralphloop.words.patterns import lazy

# Keep git's untracked cache in the private index: unchanged folders are then not read again. It is
# kept only for `status -unormal` (whose folders-as-one-entry listing is all a capture needs).
# Version 4 compresses paths: at 20,000 files the index is written in about half the time.
INDEX_VERSION = 4
CACHE_CONFIG = (
    *("-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=normal"),
    *("-c", f"index.version={INDEX_VERSION}"),  # for an index git makes; update-index converts an older one
)
# From this many files a private index is split, and a process's first capture of it asks `git status` first too
# (below it, one whole `git add -A` costs less than a `git status` and a process more).
STATUS_FROM = 2000
BIG_MARK = ".big"  # beside a private index that has been big once: it is treated as big from then on
LAYOUT_ARGS = ("--absolute-git-dir", "--show-toplevel", "--show-prefix", "--git-path", "index", "--git-common-dir")
STATUS_ARGS = (
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",  # HEAD comes with it: no process of its own
    "--no-ahead-behind",
    "--untracked-files=normal",
    "--ignored=no",
    "--no-renames",
    "--ignore-submodules=dirty",  # a submodule counts by its commit, as its gitlink does (and whatever the config)
)

Stamp = tuple[int, int, int, int]


class Layout(Struct, frozen=True):
    """Where a project's repository keeps things, as `git rev-parse` said once."""

    git_dir: str  # this worktree's .git folder (HEAD is there)
    top: str  # the repository's top folder
    prefix: str  # the project root below it: "" or "sub/dir/"
    user_index: str  # the user's index file
    common_dir: str  # where branches are kept (the main .git folder of linked worktrees)


class Memo(Struct):
    """One private index's last capture: its tree, and the user's index tree with that file's stamp."""

    layout: Layout
    tree: str | None = None
    user_stamp: Stamp | None = None
    user_tree: str | None = None
    # A tree derived from `tree` without git (workspace/derived.py): (from, derived, the paths it put in). The
    # private index still holds `from`; valid while `tree` is `from`.
    derived: tuple[str, str, tuple[str, ...]] | None = None
    # Whether a file may be hashed as it is (no filter, no end-of-line conversion), by path: with the stamps of the
    # attribute and config files that said so.
    plain: dict[str, tuple[tuple[Stamp | None, ...], bool]] = {}
    attributes: str | None = None  # core.attributesFile, once git named it


_MEMOS: dict[str, Memo] = {}  # by private index file


def parse_layout(root: str, output: bytes) -> Layout | None:
    """The Layout from `git rev-parse LAYOUT_ARGS` run in `root`."""
    lines = output.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < len(LAYOUT_ARGS) - 1 or not lines[0] or not lines[1]:
        return None
    git_dir, top, prefix, index, common = lines[:5]
    return Layout(git_dir, top, prefix, os.path.join(root, index), os.path.join(root, common))


def memo(index_file: str, layout: Layout | None = None) -> Memo | None:
    """The memo of `index_file`, made with `layout` when there is none yet."""
    found = _MEMOS.get(index_file)
    if found is None and layout is not None:
        found = _MEMOS[index_file] = Memo(layout)
    return found


def forget(index_file: str) -> None:
    """Drop what is known of `index_file` (after a capture failed half-way)."""
    _MEMOS.pop(index_file, None)


def config(big: bool) -> tuple[str, ...]:
    """The -c options for git on a private index. A big one is split: git then writes only the entries
    that changed (a few KB) and keeps the rest in a shared file in .git, where a whole index of 20,000
    files takes 5-15 ms to write, three times a capture."""
    return (*CACHE_CONFIG, "-c", f"core.splitIndex={'true' if big else 'false'}")


def is_big(index_file: str, header: tuple[int, int] | None) -> bool:
    """Whether a private index is split, and captured with `git status` even the first time in a process. Once
    so, always so: the entry count in a split index's own file is that of its changes alone."""
    if os.path.exists(index_file + BIG_MARK):
        return True
    if header is None or header[1] < STATUS_FROM:
        return False
    with open(index_file + BIG_MARK, "w", encoding="utf-8"):
        pass
    return True


def discard(index_file: str) -> bool:
    """Remove a private index git cannot use, and its lock (no other process uses it: the run holds the
    feature's lock); True when there was one. The next capture adds every file again."""
    removed = False
    for path in (index_file, index_file + ".lock"):
        try:
            os.unlink(path)
            removed = True
        except FileNotFoundError:
            pass
    return removed


def changed_paths(entries: dict[str, str], prefix: str) -> list[str]:
    """Paths under `prefix` whose files differ from the private index: a capture adds these again.

    `entries` are parse_status records of a `git status` against the private index. Its staged side
    (HEAD against the index) is the user's uncommitted work, not a change since the last capture."""
    return [
        path
        for path, record in entries.items()
        if path.startswith(prefix) and (record[0] in "?u" or (record[0] in "12" and record[3] != "."))
    ]


def stamp(path: str) -> Stamp | None:
    """What says that a file was replaced or written; None when it is missing."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def index_header(path: str) -> tuple[int, int] | None:
    """The version and number of entries of an index file; None when it is missing or not an index."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
    except OSError:
        return None
    if len(head) < 12 or head[:4] != b"DIRC":
        return None
    return int.from_bytes(head[4:8], "big"), int.from_bytes(head[8:12], "big")


def read_head(layout: Layout) -> tuple[bool, str | None]:
    """HEAD read from .git's files, as (known, commit); not known when git keeps it in a way not read here, or on a
    branch yet to be born (git knows)."""
    known, commit = head_in(layout.git_dir, layout.common_dir)
    return (True, commit) if known and commit is not None else (False, None)


def head_in(git_dir: str, common_dir: str) -> tuple[bool, str | None]:
    """The commit HEAD names in a worktree's git folder, as (known, commit): (True, None) on a branch yet to be born;
    not known for a HEAD not read here."""
    head = small_text(os.path.join(git_dir, "HEAD"))
    if head is None:
        return False, None
    if is_oid(head):
        return (False, None) if os.path.isdir(os.path.join(common_dir, "reftable")) else (True, head)  # detached
    return read_branch(common_dir, head.removeprefix("ref: ")) if head.startswith("ref: ") else (False, None)


def read_branch(common_dir: str, ref: str) -> tuple[bool, str | None]:
    """Branch `ref` (refs/heads/...) read from the repository's files as git reads it (its loose file, then
    packed-refs), as (known, commit): (True, None) when there is no such branch. Not known when git keeps its refs
    in a way not read here (reftable), or the file is not plainly an object id (a symbolic ref, a folder, a FIFO
    planted there): git is asked then. A branch is written by git as a whole file renamed into place, and packed
    before its loose file goes, so a read between two of git's writes still finds it."""
    name = ref.removeprefix("refs/heads/")
    if name == ref or not plain_branch(name) or os.path.isdir(os.path.join(common_dir, "reftable")):
        return False, None  # `main~1`, `main@{0}` and the like are revisions git resolves, not files
    from ralphloop.core.errors import RalphError
    from ralphloop.files.safe_read import read_file

    try:
        loose = read_file(os.path.join(common_dir, ref), cap=4096)
        if loose is not None:
            text = loose.decode("ascii", "replace").strip()
            return (True, text) if is_oid(text) else (False, None)
        packed = read_file(os.path.join(common_dir, "packed-refs"), cap=_PACKED_CAP) or b""
    except (RalphError, OSError):
        return False, None
    wanted = b" " + ref.encode("utf-8", "surrogateescape")
    for line in packed.splitlines():
        if line.endswith(wanted) and is_oid(oid := line[: -len(wanted)].decode("ascii", "replace")):
            return True, oid
    return True, None


_PACKED_CAP = 16 * 1024 * 1024  # a bigger packed-refs is git's to read
# Branch names git accepts whatever else its rules say: words of letters, digits, '_', '-' and inner dots between
# single slashes. Any other name is left to git (`check-ref-format`, a revision, a name it refuses).
_WORD = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?"
_PLAIN_BRANCH = lazy(rf"(?:{_WORD}/)*{_WORD}")


def plain_branch(name: str) -> bool:
    """Whether `name` (a branch's short name) is one git takes as it is: no check-ref-format, no revision syntax."""
    plain = _PLAIN_BRANCH.fullmatch(name) is not None and ".." not in name and name != "HEAD"
    return plain and not any(part.endswith(".lock") for part in name.split("/"))


def worktree_dirs(top: str) -> tuple[str, str] | None:
    """The git folder and the common folder of the worktree whose top is `top`, from its files (its `.git` folder, or
    a linked worktree's `gitdir:` file and its git folder's `commondir`), read afresh: a worktree removed and added
    again may have others. None for a folder that is no worktree's top, or files not read here."""
    dot = os.path.join(os.path.abspath(top), ".git")
    if os.path.isdir(dot):  # git's test of a git folder: HEAD, objects/ and refs/ (else it looks further up)
        whole = all(os.path.isdir(os.path.join(dot, part)) for part in ("objects", "refs"))
        return (dot, dot) if whole and os.path.isfile(os.path.join(dot, "HEAD")) else None
    pointer = small_text(dot)
    if pointer is None or not pointer.startswith("gitdir: "):
        return None
    git_dir = os.path.normpath(os.path.join(os.path.dirname(dot), pointer.removeprefix("gitdir: ")))
    common = small_text(os.path.join(git_dir, "commondir"))
    return (git_dir, os.path.normpath(os.path.join(git_dir, common))) if common else None


def worktree_head(top: str) -> tuple[bool, str | None]:
    """The commit HEAD names in the worktree whose top is `top` (worktree_dirs), as (known, commit): (True, None) on
    a branch yet to be born. Not known for a folder that is no worktree's top, or a HEAD not read here."""
    dirs = worktree_dirs(top)
    return head_in(*dirs) if dirs is not None else (False, None)


def small_text(path: str) -> str | None:
    """A small file of git's (at most 4 KB), stripped; None when there is none or it is no regular file (a FIFO
    planted there)."""
    from ralphloop.core.errors import RalphError
    from ralphloop.files.safe_read import read_file

    try:
        raw = read_file(path, cap=4096)
    except (RalphError, OSError):
        return None
    return raw.decode("utf-8", "surrogateescape").strip() if raw is not None else None


def head_ref(layout: Layout) -> str | None:
    """The branch HEAD names (refs/heads/...), read from .git/HEAD; None when detached or unreadable."""
    text = small_text(os.path.join(layout.git_dir, "HEAD"))
    return text[len("ref: ") :] if text and text.startswith("ref: refs/heads/") else None


# What git keeps in .git while an operation waits for the user, and the operation's name; the first found wins
# (an am keeps rebase-apply/applying, a rebase that stopped on a pick keeps no CHERRY_PICK_HEAD).
OPERATIONS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply/applying", "am"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("sequencer", "cherry-pick"),  # a range of picks or reverts between two commits
)


def operation(layout: Layout) -> str | None:
    """The git operation in progress in this worktree (a merge, rebase, cherry-pick, revert or am); None when none."""
    return next((name for path, name in OPERATIONS if os.path.exists(os.path.join(layout.git_dir, path))), None)


def is_oid(text: str) -> bool:
    return len(text) in {40, 64} and all(ch in "0123456789abcdef" for ch in text)
