"""A capture's tree derived without a git process, its changed files' blobs and the trees above them written as
loose objects (workspace/objects.py): two git processes fewer (an add and a write-tree) where only files ralph
itself wrote changed since the last capture (progress.txt, appended after each iteration), and, in a big project,
where `git status` lists a few files changed in place (the agent's edits): each then costs a read and a hash here,
where git's add and write-tree each read the whole index (20,000 files: two processes of 10-15 ms).

This holds only where git would store the file as it is on disk: no filter, end-of-line conversion, ident or
working-tree encoding may apply to it (asked of git once, and again when an attribute or config file changes),
and its entry must already be in the tree as a plain file of the same mode. Otherwise None: the caller lets git
do it.
"""

from __future__ import annotations

import os
import stat

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import read_file
from ralphloop.workspace import gitcache, objects
from ralphloop.workspace.git import run

# The attributes under which `git add` stores something other than the bytes on disk.
_CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def tree_with(memo: gitcache.Memo, base: str, paths: list[str]) -> str | None:
    """`base` with each of `paths` (from the repository's top) as it is on disk now; None when git must do it."""
    store = objects.Store.of(memo.layout.common_dir)
    if store is None or not _plain(memo, paths):
        return None
    tree: str | None = base
    for path in paths:
        content = _regular_file(os.path.join(memo.layout.top, path))
        if content is None or tree is None:
            return None
        data, mode = content
        try:
            tree = objects.with_file(store, tree, path, data, mode)
        except OSError:
            return None
    return tree


_CAP = 64 * 1024 * 1024  # a file ralph wrote, hashed here; a bigger one (an agent's flood) is git's to add


def _regular_file(path: str) -> tuple[bytes, int] | None:
    """A regular file's bytes and mode, never through a symlink; None for anything else, or one over the cap."""
    try:
        info = os.lstat(path)
        data = read_file(path, cap=_CAP, follow=False) if stat.S_ISREG(info.st_mode) else None
    except (RalphError, OSError):  # refused (a link, a FIFO, over the cap), or gone
        return None
    return (data, info.st_mode) if data is not None else None


def _plain(memo: gitcache.Memo, paths: list[str]) -> bool:
    """Whether git stores each of `paths` as its bytes on disk: each path's answer kept, and asked of git again
    when a file that can change it changed (a capture and the commit's read of progress.txt ask of other paths)."""
    stamps = {path: tuple(gitcache.stamp(source) for source in _sources(memo, [path])) for path in paths}
    unknown = [path for path in paths if path not in memo.plain or memo.plain[path][0] != stamps[path]]
    if unknown:
        answers = _asked_git(memo, unknown)  # a core.attributesFile it names is watched from the next call on
        if len(memo.plain) > _PLAIN_KEPT:
            memo.plain.clear()
        memo.plain.update((path, (stamps[path], answers.get(path, False))) for path in unknown)
    return all(memo.plain[path][1] for path in paths)


_PLAIN_KEPT = 4096  # paths whose answer is kept


def _asked_git(memo: gitcache.Memo, paths: list[str]) -> dict[str, bool]:
    """Each path's answer; {} (no path is plain) when git's config converts every file or git cannot say."""
    top = memo.layout.top
    config = run(top, "config", "-z", "--get-regexp", r"^core\.(autocrlf|attributesfile)$")
    if config.returncode not in {0, 1}:
        return {}
    for record in config.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]:
        key, valued, value = record.partition("\n")  # a key alone, with no value at all, is a true
        if key == "core.attributesfile":  # watched from now on, with the usual places
            memo.attributes = os.path.join(top, os.path.expanduser(value))
        elif not valued or value.strip().lower() not in {"", "false"}:
            return {}
    attributes = run(top, "check-attr", "-z", *_CONVERTING, "--", *paths)
    fields = attributes.stdout.split(b"\0")[:-1]  # path, attribute, value, ... each ended by a NUL
    if attributes.returncode != 0 or len(fields) != 3 * len(paths) * len(_CONVERTING):
        return {}
    values = fields[2::3]  # each path's attributes in turn, in the order asked
    size = len(_CONVERTING)
    return {
        path: all(value == b"unspecified" for value in values[at * size : (at + 1) * size])
        for at, path in enumerate(paths)
    }


def _sources(memo: gitcache.Memo, paths: list[str]) -> list[str]:
    """The files whose change can change `_plain`'s answer: every .gitattributes on the way to each path, the
    repository's info/attributes and config, the user's and the system's, and core.attributesFile once git named
    it (a file a config includes is not watched)."""
    layout = memo.layout
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [
        os.path.join(layout.common_dir, "info", "attributes"),
        os.path.join(layout.common_dir, "config"),
        os.path.join(layout.git_dir, "config.worktree"),
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.path.join(xdg, "git", "attributes"),
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        "/etc/gitattributes",
        *([memo.attributes] if memo.attributes else []),
    ]
    for path in paths:
        folder = ""
        for name in ["", *path.split("/")[:-1]]:
            folder = os.path.join(folder, name) if folder else name
            found.append(os.path.join(layout.top, folder, ".gitattributes"))
    return found


# At most this many files changed since the private index's tree are hashed here: past it, git adds them to the
# private index (which then holds them, and the count starts again), as `git status` hashes them all each time too.
_MOST_FILES = 64
_MOST_BYTES = 16 * 1024 * 1024


def tree_from_status(memo: gitcache.Memo, records: dict[str, str]) -> str | None:
    """The private index's tree (`memo.tree`) with the files a `git status` against it listed as changed in the
    work tree (its records by path, from the top), as they are on disk; None when git must add them: a new folder,
    a link, a mode change, an executable new file, a submodule, a conflict, more than a few files or bytes."""
    base, store = memo.tree, objects.Store.of(memo.layout.common_dir)
    if base is None or store is None or not records or len(records) > _MOST_FILES:
        return None
    held = objects.entries_at(store, base, list(records))  # the trees on the way read before any file is
    if held is None:  # not loose (packed by git's gc): git adds them, and writes the trees it changes loose
        return None
    files: dict[str, tuple[bytes, bytes]] = {}  # path: its mode and bytes
    gone: list[str] = []
    left = _MOST_BYTES
    for path, record in records.items():
        mode = _mode(record, held.get(path))
        if mode is None:
            return None
        where = os.path.join(memo.layout.top, path)
        if record[:1] == "1" and record[3] == "D" and not os.path.lexists(where):  # not made again since git looked
            gone.append(path)
            continue
        content = _regular_file(where) if record[:1] == "?" or record[3] == "M" else None
        # a carriage return: git may store other bytes (core.autocrlf from a config file not watched, say)
        if content is None or len(content[0]) > left or b"\r" in content[0]:
            return None
        if bool(content[1] & 0o100) != (mode == b"100755"):
            return None
        left -= len(content[0])
        files[path] = (mode, content[0])
    if files and not _plain(memo, sorted(files)):
        return None
    try:
        changes: dict[str, objects.Entry | None] = dict.fromkeys(gone)
        for path, (mode, data) in files.items():
            changes[path] = (mode, bytes.fromhex(store.write(b"blob", data)))
        return objects.with_entries(store, base, changes)
    except OSError:  # an object that cannot be written: git's add says why, if it cannot either
        return None


def _mode(record: str, entry: objects.Entry | None) -> bytes | None:
    """The mode a listed file keeps: its entry's, for a plain file changed in place or deleted (`1 XY sub mH mI mW hH
    hI path`, not a submodule); a plain file's, for a new file (`?`, one the tree does not hold: a new folder is
    listed whole, and is git's); None when git must add it."""
    if record == "?":
        return b"100644" if entry is None else None  # an executable one is git's: core.fileMode may say otherwise
    fields = record.split(" ", 8)
    if len(fields) < 9 or fields[0] != "1" or fields[2] != "N..." or fields[4] not in ("100644", "100755"):
        return None
    return entry[0] if entry is not None and entry[0] == fields[4].encode() else None
