"""git's loose objects, read and written directly: the trees ralph derives between two iterations without a
git process (a file ralph itself wrote put into the last capture's tree), and what changed between two trees.

Only what is simple and settled is done here: SHA-1 repositories, loose objects (the format git has kept since
2005: `<kind> <size>\\0<content>`, zlib-compressed, under objects/xx/), plain files. Anything else (a packed
object, an alternate object store, a SHA-256 repository, a filter or an end-of-line conversion on the file)
answers None, and the caller asks git, which stays the authority. Each git process costs 1.5-2 ms; a loose
object is read or written in microseconds (bench/loop_overhead.py, issue 33).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import zlib
from collections.abc import Mapping
from types import MappingProxyType

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import read_file
from ralphloop.workspace import gitcache

_TREE_MODE = b"40000"
_FILE_MODES = {b"100644": 0o644, b"100755": 0o755}
_LINK_MODE = b"120000"
_CANONICAL = {*_FILE_MODES, _LINK_MODE, _TREE_MODE, b"160000"}

Entry = tuple[bytes, bytes]  # (mode, raw object id) of one name in a tree
_CAP = 16 * 1024 * 1024  # an object read here (a tree, a commit), packed or not: more is git's to read
# Trees read or written, by (object folder, id): an object's id names its content for good, and each iteration
# reads again the trees the last one wrote or compared. Nobody changes an entry (copies are made).
_TREES: dict[tuple[str, str], Mapping[bytes, Entry]] = {}
_TREES_KEPT = 1024


_REPLACED: dict[str, tuple[object, bool]] = {}  # packed-refs -> (its stamp, whether it holds refs/replace/)


def _replaced(common_dir: str) -> bool:
    """Whether git would read some object through a replacement (`refs/replace/`), or might (its base renamed)."""
    if os.environ.get("GIT_NO_REPLACE_OBJECTS"):
        return False
    if os.environ.get("GIT_REPLACE_REF_BASE"):
        return True
    with contextlib.suppress(OSError):
        if os.listdir(os.path.join(common_dir, "refs", "replace")):
            return True
    packed = os.path.join(common_dir, "packed-refs")
    stamp = gitcache.stamp(packed)
    known = _REPLACED.get(packed)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        found = stamp is not None and b"refs/replace/" in (read_file(packed, cap=_CAP) or b"")
    except RalphError:
        found = True  # not a file read here: as if it held some
    _REPLACED[packed] = (stamp, found)
    return found


class Store:
    """One repository's object folder (`<common dir>/objects`), or None from `of` where git's environment
    points elsewhere (GIT_OBJECT_DIRECTORY, alternates given in the environment)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    @classmethod
    def of(cls, common_dir: str) -> Store | None:
        if os.environ.get("GIT_OBJECT_DIRECTORY") or os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES"):
            return None
        if _replaced(common_dir):
            return None  # `git replace` makes git see other objects than the ones stored under their ids
        return cls(os.path.join(common_dir, "objects"))

    def read(self, oid: str, kind: bytes) -> bytes | None:
        """The content of loose object `oid` when it is one of `kind`; None when it is not loose (packed, or
        missing) or not readable as one: a link, a FIFO or a device planted in its place, a file or a content over
        the cap (a tree ralph reads is a few KB), data that is not zlib's."""
        if len(oid) != 40:
            return None
        try:
            packed = read_file(os.path.join(self.folder, oid[:2], oid[2:]), cap=_CAP, follow=False)
            inflate = zlib.decompressobj()
            raw = inflate.decompress(packed, _CAP) if packed is not None else None
        except (RalphError, OSError, zlib.error):  # refused (not a regular file, over the cap), unreadable
            return None
        if raw is None or inflate.unconsumed_tail:
            return None
        header, _, content = raw.partition(b"\0")
        if header != kind + b" " + str(len(content)).encode():
            return None
        return content

    def write(self, kind: bytes, content: bytes) -> str:
        """Store `content` as a loose object of `kind` (as git does: a read-only temporary file moved into place;
        an object already there is kept); returns its id. Raises OSError when the folder is not writable."""
        raw = kind + b" " + str(len(content)).encode() + b"\0" + content
        oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        folder = os.path.join(self.folder, oid[:2])
        final = os.path.join(folder, oid[2:])
        if os.path.exists(final):
            return oid
        if not os.path.isdir(folder):
            mode = stat.S_IMODE(os.stat(self.folder).st_mode)  # a shared repository's group bits, as git keeps them
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, mode)
                os.chmod(folder, mode)
        temporary = os.path.join(folder, f"tmp_obj_ralph_{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)  # left by a killed process of the same PID
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o444)
        try:
            with os.fdopen(handle, "wb", closefd=False) as writing:
                writing.write(zlib.compress(raw, 1))
        finally:
            os.close(handle)
        os.replace(temporary, final)  # the same content if git wrote it meanwhile
        return oid

    def tree(self, oid: str) -> Mapping[bytes, Entry] | None:
        """The entries of loose tree `oid` by name (read-only: they are kept for the next reader); None when it is
        not a loose tree."""
        kept = _TREES.get((self.folder, oid))
        if kept is not None:
            return kept
        content = self.read(oid, b"tree")
        try:
            entries = None if content is None else _parse_tree(content)
        except ValueError:  # not a tree git wrote
            return None
        return None if entries is None else self._keep(oid, entries)

    def write_tree(self, entries: dict[bytes, Entry]) -> str:
        """`entries` stored as a tree object (kept: the next iteration reads it); its id."""
        oid = self.write(b"tree", _tree_bytes(entries))
        self._keep(oid, entries)
        return oid

    def _keep(self, oid: str, entries: dict[bytes, Entry]) -> Mapping[bytes, Entry]:
        if len(_TREES) >= _TREES_KEPT:
            del _TREES[next(iter(_TREES))]  # the oldest
        kept = _TREES[(self.folder, oid)] = MappingProxyType(entries)  # read-only: every caller shares it
        return kept


def commit_tree(store: Store, oid: str) -> str | None:
    """The tree of loose commit `oid`; None when it is not a loose commit."""
    content = store.read(oid, b"commit")
    if content is None or not content.startswith(b"tree ") or content[45:46] != b"\n":
        return None
    return content[5:45].decode("ascii", "replace")


def holds_all(store: Store | None, tree: str | None, paths: list[str]) -> bool:
    """Whether `tree` holds each of `paths` (from the top, '/'-separated) as a file or a submodule; False when one
    is missing, a tree on the way is not loose, or there is no store or tree to look in."""
    if store is None or tree is None:
        return False
    for path in paths:
        current: str | None = tree
        names = path.encode("utf-8", "surrogateescape").split(b"/")
        for depth, name in enumerate(names):
            entries = store.tree(current) if current is not None else None
            found = entries.get(name) if entries is not None else None
            if found is None:
                return False
            last = depth == len(names) - 1
            if last != (found[0] != _TREE_MODE):
                return False  # a folder where a file was named, or the other way round
            current = found[1].hex()
    return True


def left_out(store: Store | None, commit: str | None, tree: str, paths: list[str]) -> list[str]:
    """The paths whose entry in `commit`'s tree is not their entry in `tree` (what was to be committed); none when
    it cannot be told here (an object not loose)."""
    top = commit_tree(store, commit) if store is not None and commit else None
    if store is None or top is None:
        return []
    committed, wanted = entries_at(store, top, paths), entries_at(store, tree, paths)
    if committed is None or wanted is None:
        return []
    return [path for path in paths if committed[path] != wanted[path]]


def blob_at(store: Store, commit: str, path: str) -> tuple[bool, bytes | None]:
    """The file at `path` (from the top, '/'-separated) in loose commit `commit`, as `git show COMMIT:PATH` prints
    it (a link's target for a link), as (known, content): (True, None) when the commit holds no such path. Not known
    when the commit, a tree on the way or the blob is not loose, or the path names a folder or a submodule."""
    top = commit_tree(store, commit)
    plain = path and "//" not in path and not path.startswith(("./", "../", "/")) and not path.endswith("/")
    found = entries_at(store, top, [path]) if top is not None and plain and path not in (".", "..") else None
    if found is None:
        return False, None
    entry = found[path]
    if entry is None:
        return True, None
    if entry[0] not in _FILE_MODES and entry[0] != _LINK_MODE:
        return False, None
    content = store.read(entry[1].hex(), b"blob")
    return (True, content) if content is not None else (False, None)


def entries_at(store: Store, tree: str, paths: list[str]) -> dict[str, Entry | None] | None:
    """Each path's entry in `tree` (None: it holds no such path); None when a tree on the way is not loose."""
    found: dict[str, Entry | None] = {}
    for path in paths:
        entry: Entry | None = (_TREE_MODE, bytes.fromhex(tree))
        for name in path.encode("utf-8", "surrogateescape").split(b"/"):
            if entry is None or entry[0] != _TREE_MODE:
                entry = None
                break
            entries = store.tree(entry[1].hex())
            if entries is None:
                return None
            entry = entries.get(name)
        found[path] = entry
    return found


def with_file(store: Store, tree: str, path: str, content: bytes, mode: int) -> str | None:
    """The tree `tree` with the file at `path` (from the repository's top, '/'-separated) holding `content`, its
    executable bit as `mode` says: written, and its id returned. None when the path is not a plain file of that
    tree already, or a tree on the way is not loose: git must do it."""
    names = path.encode("utf-8", "surrogateescape").split(b"/")
    trees: list[Mapping[bytes, Entry]] = []
    current = tree
    for name in names[:-1]:
        entries = store.tree(current)
        found = entries.get(name) if entries is not None else None
        if entries is None or found is None or found[0] != _TREE_MODE:
            return None
        trees.append(entries)
        current = found[1].hex()
    entries = store.tree(current)
    old = entries.get(names[-1]) if entries is not None else None
    if entries is None or old is None or old[0] not in _FILE_MODES:
        return None
    executable = b"100755" if mode & 0o100 else b"100644"
    if old[0] != executable:
        return None  # a mode change: git knows whether core.fileMode lets it count
    blob = store.write(b"blob", content)
    # One entry's id replaced in place: git's order of the entries stays as git wrote it.
    oid = store.write_tree({**entries, names[-1]: (old[0], bytes.fromhex(blob))})
    for parent, name in zip(reversed(trees), reversed(names[:-1]), strict=True):
        oid = store.write_tree({**parent, name: (_TREE_MODE, bytes.fromhex(oid))})
    return oid


def entries_in(store: Store, commit: str, paths: list[str]) -> dict[str, Entry | None] | None:
    """Each path's entry (mode, raw id) in loose commit `commit` (None: it holds no such path); None when the commit
    or a tree on the way is not loose."""
    top = commit_tree(store, commit)
    return entries_at(store, top, paths) if top is not None else None


def with_entries(store: Store, tree: str, changes: dict[str, Entry | None]) -> str | None:
    """Tree `tree` with each path of `changes` (from the top, '/'-separated) holding its entry, or gone for None
    (a folder left empty goes too, as git's index would drop it): written, and its id returned. None when a tree to
    read is not loose, a file stands where a folder would be needed, or nothing would be left: git must do it."""
    split = {tuple(path.encode("utf-8", "surrogateescape").split(b"/")): entry for path, entry in changes.items()}
    try:
        return _edit(store, tree, split, 0)
    except _NotLoose:
        return None


def _edit(store: Store, oid: str | None, changes: dict[tuple[bytes, ...], Entry | None], depth: int) -> str:
    if depth > _DEEPEST or any(b"" in parts for parts in changes):
        raise _NotLoose(oid)
    entries = dict(_entries(store, oid))
    below: dict[bytes, dict[tuple[bytes, ...], Entry | None]] = {}
    for parts, entry in changes.items():
        held_here = entries.get(parts[0])
        if len(parts) > 1:
            below.setdefault(parts[0], {})[parts[1:]] = entry
        elif held_here is not None and held_here[0] == _TREE_MODE and (entry is None or entry[0] != _TREE_MODE):
            raise _NotLoose(parts[0])  # a folder where a file is to be taken away or put: git says what it does
        elif entry is None:
            entries.pop(parts[0], None)
        else:
            entries[parts[0]] = entry
    for name, inner in below.items():
        held = entries.get(name)
        if held is not None and held[0] != _TREE_MODE:
            if all(entry is None for entry in inner.values()):
                continue  # nothing to take away below a file
            raise _NotLoose(name)
        try:
            entries[name] = (_TREE_MODE, bytes.fromhex(_edit(store, held[1].hex() if held else None, inner, depth + 1)))
        except _Emptied:
            entries.pop(name, None)
    if not entries:
        raise _Emptied(oid) if depth else _NotLoose(oid)
    if any(mode not in _CANONICAL for mode, _ in entries.values()):
        raise _NotLoose(oid)  # git's index would write an old mode (100664) anew: the tree would be another
    # git's order: a folder's name sorts as if it ended with '/'
    ordered = sorted(entries.items(), key=lambda item: item[0] + (b"/" if item[1][0] == _TREE_MODE else b""))
    return store.write_tree(dict(ordered))


class _Emptied(Exception):
    """A folder every entry of which was taken away: it goes from its parent."""


def changed_paths(store: Store, before: str, after: str) -> list[str] | None:
    """The paths whose file (content, mode or kind) differs between two trees, as
    `git diff-tree -r --name-only --no-renames` lists them, sorted; None when a tree to read is not loose."""
    found: set[bytes] = set()
    try:
        _walk(store, before, after, b"", found)
    except _NotLoose:
        return None
    return sorted(name.decode("utf-8", "surrogateescape") for name in found)


class _NotLoose(Exception):
    """A tree needed for the comparison is packed or missing: git compares instead."""


_DEEPEST = 512  # folders in folders: deeper than any real tree (a tree planted to hold itself never ends)


def _walk(
    store: Store, before: str | None, after: str | None, prefix: bytes, found: set[bytes], depth: int = 0
) -> None:
    if before == after:
        return
    if depth > _DEEPEST:
        raise _NotLoose(prefix)
    old = _entries(store, before)
    new = _entries(store, after)
    for name in old.keys() | new.keys():
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        path = prefix + name
        a_tree = a is not None and a[0] == _TREE_MODE
        b_tree = b is not None and b[0] == _TREE_MODE
        if a_tree or b_tree:
            old_tree = a[1].hex() if a and a_tree else None
            _walk(store, old_tree, b[1].hex() if b and b_tree else None, path + b"/", found, depth + 1)
        if (a is not None and not a_tree) or (b is not None and not b_tree):
            found.add(path)


def _entries(store: Store, oid: str | None) -> Mapping[bytes, Entry]:
    if oid is None:
        return {}
    entries = store.tree(oid)
    if entries is None:
        raise _NotLoose(oid)
    return entries


def _parse_tree(content: bytes) -> dict[bytes, Entry]:
    entries: dict[bytes, Entry] = {}
    at = 0
    while at < len(content):
        space = content.index(b" ", at)
        nul = content.index(b"\0", space)
        if nul + 21 > len(content):
            raise ValueError("a tree entry cut short")
        entries[content[space + 1 : nul]] = (content[at:space], content[nul + 1 : nul + 21])
        at = nul + 21
    return entries


def _tree_bytes(entries: dict[bytes, Entry]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + oid for name, (mode, oid) in entries.items())
