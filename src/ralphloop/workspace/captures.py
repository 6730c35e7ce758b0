"""Whole-workspace captures as git trees: what an iteration changed (workspace/undo.py puts one back).

A capture writes every file under the project root (tracked or not, ignored ones aside) as a tree
through a private index kept in .git/ralph/, so the user's staging area is never touched; see gitcache
for what makes the next capture cheap. A git that fails raises OSError with its reason: a failed capture
is never an empty one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence

from msgspec import Struct

from ralphloop.workspace import git, gitcache, objects
from ralphloop.workspace.derived import tree_from_status, tree_with
from ralphloop.workspace.git import parse_status, reason, run


class WorkTree(Struct, frozen=True):
    """The workspace at one instant as git objects: HEAD, the tree of every tracked and untracked
    (not ignored) file as it is on disk, and the tree of the index (None when it has conflicts).

    Two captures with the same `tree` hold the same content, whatever the file times say."""

    head: str | None
    tree: str
    index_tree: str | None
    branch: str | None = None  # the ref HEAD names (refs/heads/...): an undo goes back to it
    operation: str | None = None  # a merge, rebase, cherry-pick, revert or am waiting for the user (gitcache)


def head_moved(start: WorkTree | None, end: WorkTree | None) -> str | None:
    """HEAD at `end`, short, when it moved since `start` (the agent committed): None when it did not."""
    moved = end is not None and end.head and (start is None or end.head != start.head)
    return end.head[:12] if moved and end is not None and end.head else None


def scratch_index(root: str, name: str) -> str | None:
    """A private index file for captures (inside .git), so the user's staging area is never touched."""
    layout = git.layout(root)
    if layout is None:
        return None
    folder = os.path.join(layout.git_dir, "ralph")
    os.makedirs(folder, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)
    index_file = os.path.join(folder, f"{safe}.index")
    gitcache.memo(index_file, layout)
    return index_file


def capture(root: str, index_file: str) -> WorkTree:
    """Capture the workspace (every file under `root` but ignored ones) as a tree in the private index.
    Cheap when little changed: see gitcache. Raises OSError with git's reason when git cannot do it."""
    memo = gitcache.memo(index_file)
    if memo is None:
        done = run(root, "rev-parse", *gitcache.LAYOUT_ARGS)  # no git at all: FileNotFoundError, an OSError too
        memo = gitcache.memo(index_file, gitcache.parse_layout(root, done.stdout) if done.returncode == 0 else None)
        if memo is None:
            raise OSError(f"git rev-parse failed: {reason(done)}")
    try:
        try:
            head, tree = _capture_tree(root, memo, index_file)
        except OSError:
            if not gitcache.discard(index_file):
                raise
            # A private index git cannot use (its shared part or its objects pruned, say): made again from the files.
            memo.tree = None
            head, tree = _capture_tree(root, memo, index_file)
        layout = memo.layout
        return WorkTree(head, tree, _user_tree(root, memo), gitcache.head_ref(layout), gitcache.operation(layout))
    except OSError:
        gitcache.forget(index_file)
        raise


def position(root: str, index_file: str) -> WorkTree:
    """HEAD, the branch it names and a git operation waiting, without walking the files (`tree` is empty)."""
    memo = gitcache.memo(index_file)
    if memo is None:
        done = run(root, "rev-parse", *gitcache.LAYOUT_ARGS)
        layout = gitcache.parse_layout(root, done.stdout) if done.returncode == 0 else None
        if layout is None:
            raise OSError(f"git rev-parse failed: {reason(done)}")
    else:
        layout = memo.layout
    return WorkTree(_head(root, layout), "", None, gitcache.head_ref(layout), gitcache.operation(layout))


def recapture(root: str, index_file: str, base: WorkTree, paths: Sequence[str]) -> WorkTree:
    """capture() when only `paths` (absolute, or from `root`) can have changed since `base`, this index's
    last capture (or a tree derived from it), as when ralph itself wrote them between two iterations: nothing
    else is looked at.

    Derives the tree without git when it can (workspace/derived.py), else costs `git add` of those paths and
    `write-tree`, where capture() runs a `git status` of every file; falls back to capture() when `base` is not
    what the private index last held."""
    memo = gitcache.memo(index_file)
    if memo is None or memo.tree is None:
        return capture(root, index_file)
    derived = memo.derived if memo.derived is not None and memo.derived[0] == memo.tree else None
    if base.tree == memo.tree:
        pending: tuple[str, ...] = ()  # what the private index does not hold yet
    elif derived is not None and base.tree == derived[1]:
        pending = derived[2]
    else:
        return capture(root, index_file)
    top = os.path.realpath(memo.layout.top)
    # the folders resolved, not the file (a file that is a symlink is added as one), and what a symlink names, which
    # is what ralph wrote to
    full = [os.path.join(root, path) for path in paths]
    inside = list(dict.fromkeys(os.path.relpath(where, top) for path in full for where in _written(path)))
    listed = [path for path in inside if path != ".." and not path.startswith(("../", "/"))]
    tree = base.tree
    if listed:
        made = tree_with(memo, base.tree, listed)
        if made is not None:
            memo.derived = (memo.tree, made, tuple(sorted({*pending, *listed})))
            tree = made
        else:
            added = _added(root, index_file, memo, sorted({*pending, *listed}))
            if added is None:
                return capture(root, index_file)
            tree = added
    layout = memo.layout
    user = _user_tree(root, memo)
    return WorkTree(_head(root, layout), tree, user, gitcache.head_ref(layout), gitcache.operation(layout))


def _written(path: str) -> tuple[str, ...]:
    folder, name = os.path.split(path)
    here = os.path.join(os.path.realpath(folder), name)
    return (here, os.path.realpath(here)) if os.path.islink(here) else (here,)


def _added(root: str, index_file: str, memo: gitcache.Memo, listed: list[str]) -> str | None:
    """The private index's tree once `listed` are added again; None when git refused them (one vanished, say).
    Raises OSError when the tree cannot be written."""
    private = private_git(index_file, gitcache.is_big(index_file, gitcache.index_header(index_file)))
    if not add_paths(memo.layout.top, private, listed):
        return None
    tree = private(root, "write-tree")
    if tree.returncode != 0:
        gitcache.forget(index_file)
        raise OSError(f"git write-tree failed: {reason(tree)}")
    memo.tree, memo.derived = tree.stdout.decode().strip(), None
    return memo.tree


def _capture_tree(root: str, memo: gitcache.Memo, index_file: str) -> tuple[str | None, str]:
    """HEAD and the tree of the workspace, written from the private index brought up to date; OSError when
    git cannot write it."""
    header = gitcache.index_header(index_file)
    big = gitcache.is_big(index_file, header)
    private = private_git(index_file, big)
    if header is None:  # no private index yet: every file is added
        head, state = _head(root, memo.layout), _UNKNOWN
    elif not big and memo.tree is None:  # this process's first capture: no tree to derive from yet
        head, state = _head(root, memo.layout), _add_all(root, private)
    else:
        if big and header[0] != gitcache.INDEX_VERSION:  # made by an older ralph
            private(root, "update-index", "--index-version", str(gitcache.INDEX_VERSION))
        head, state = _status_and_add(memo, private)
    if state == _DERIVED and memo.derived is not None:
        return head, memo.derived[1]
    if state == _SAME and memo.tree is not None:
        memo.derived = None  # the files are what the private index holds
        return head, memo.tree
    if state == _UNKNOWN:
        _checked_add(private(root, "add", "-A", "--ignore-errors", "--", "."))
    tree = private(root, "write-tree")
    if tree.returncode != 0:
        raise OSError(f"git write-tree failed: {reason(tree)}")
    memo.tree, memo.derived = tree.stdout.decode().strip(), None
    return head, memo.tree


# What a first step learnt of the private index: nothing changed, paths were added, the tree was derived without
# adding them (memo.derived), or nothing is known.
_SAME, _ADDED, _DERIVED, _UNKNOWN = "same", "added", "derived", "unknown"
PrivateGit = Callable[..., subprocess.CompletedProcess[bytes]]


def private_git(index_file: str, big: bool) -> PrivateGit:
    """git on the private index: `call(cwd, *args, stdin=None)`."""
    env = {"GIT_INDEX_FILE": index_file, "GIT_OPTIONAL_LOCKS": "1"}  # the private index may be rewritten
    config = gitcache.config(big)

    def call(cwd: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return run(cwd, *config, *args, env=env, stdin=stdin)

    return call


def _head(root: str, layout: gitcache.Layout) -> str | None:
    known, head = gitcache.read_head(layout)
    if known:
        return head
    found = run(root, "rev-parse", "--verify", "-q", "HEAD")
    return found.stdout.decode().strip() or None if found.returncode == 0 else None


def _add_all(root: str, private: PrivateGit) -> str:
    """`git add -A` of the whole project: a small one's first capture in a process (no tree to derive from yet),
    cheaper than a `git status` first."""
    done = _checked_add(private(root, "add", "-A", "--verbose", "--ignore-errors", "--", "."))
    # --verbose names each path added or removed: silence means the index holds what it held.
    return _SAME if not done.stdout.strip() else _ADDED


def _checked_add(done: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[bytes]:
    """`done`, a `git add --ignore-errors`, when it added what it could (1: it skipped an unreadable file)."""
    if done.returncode not in {0, 1}:
        raise OSError(f"git add failed: {reason(done)}")
    return done


def _status_and_add(memo: gitcache.Memo, private: PrivateGit) -> tuple[str | None, str]:
    """`git status` against the private index (it reads only changed folders), then the tree derived with what it
    lists (a few files edited in place), else those added."""
    layout = memo.layout
    # Limiting status to a folder turns git's untracked cache off: only when ralph runs below the top.
    where = ("--", f":(literal){layout.prefix}") if layout.prefix else ()
    status = private(layout.top, *gitcache.STATUS_ARGS, *where)
    if status.returncode != 0:
        return _head(layout.top, layout), _UNKNOWN
    snap = parse_status(status.stdout)
    listed = gitcache.changed_paths(snap.entries, layout.prefix)
    if not listed:
        return snap.head, _SAME
    made = tree_from_status(memo, {path: snap.entries[path] for path in listed})
    if made is not None and memo.tree is not None:
        memo.derived = (memo.tree, made, tuple(sorted(listed)))  # the private index does not hold them: status
        return snap.head, _DERIVED  # lists them again next time, until git adds them
    return snap.head, _ADDED if add_paths(layout.top, private, listed) else _UNKNOWN


def add_paths(top: str, private: PrivateGit, paths: list[str]) -> bool:
    """`git add -A` of exactly `paths` (from the top); False when git refused them all (one vanished, say)."""
    listed = "".join(f"{path}\0" for path in paths).encode("utf-8", "surrogateescape")
    args = ("add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul")
    done = private(top, "-c", "core.literalPathspecs=true", *args, stdin=listed)
    return done.returncode in {0, 1}  # 1: --ignore-errors skipped an unreadable file, the rest is added


def _user_tree(root: str, memo: gitcache.Memo) -> str | None:
    """The user's staging area as a tree (None while it has conflicts); written again only when its file changed."""
    before = gitcache.stamp(memo.layout.user_index)
    if before is not None and before == memo.user_stamp:
        return memo.user_tree
    done = run(root, "write-tree")
    if done.returncode != 0 and not _unmerged(done):
        done = _tree_of_a_copy(root, memo.layout.user_index)  # git holds its lock (the user's git, an editor's)
        if done.returncode != 0 and not _unmerged(done):
            raise OSError(f"git write-tree of the staging area failed: {reason(done)}")
    tree = done.stdout.decode().strip() if done.returncode == 0 else None
    # write-tree may itself rewrite the index (to store its cache of trees): remember it once it does not.
    kept = tree is not None and before == gitcache.stamp(memo.layout.user_index)
    memo.user_stamp, memo.user_tree = (before, tree) if kept else (None, None)
    return tree


def _unmerged(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether a failed write-tree failed on conflicts (the staging area then has no tree)."""
    return b"error building trees" in done.stderr


def _tree_of_a_copy(root: str, index: str) -> subprocess.CompletedProcess[bytes]:
    """`git write-tree` of a copy of the index file `index`: it needs no lock on the file itself."""
    copy = f"{index}.ralph-{os.getpid()}"
    try:
        shutil.copyfile(index, copy)
        return run(root, "write-tree", env={"GIT_INDEX_FILE": copy})
    finally:
        for path in (copy, copy + ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def blob(root: str, tree: str, rel: str) -> bytes | None:
    """The content of `rel` (a path from the repository's top) in `tree`; None when the tree does not hold it."""
    done = run(root, "cat-file", "blob", f"{tree}:{rel}")
    return done.stdout if done.returncode == 0 else None


def changed_between(root: str, before: WorkTree, after: WorkTree, layout: gitcache.Layout | None = None) -> list[str]:
    """Paths whose content differs between two captures (commits and uncommitted work alike). With the
    repository's `layout`, two trees held as loose objects are compared without a git process."""
    if before.tree == after.tree:
        return []
    store = objects.Store.of(layout.common_dir) if layout is not None else None
    found = objects.changed_paths(store, before.tree, after.tree) if store is not None else None
    if found is not None:
        return found
    done = run(root, "diff-tree", "-r", "--name-only", "-z", "--no-renames", before.tree, after.tree)
    if done.returncode != 0:
        raise OSError(f"git diff-tree failed: {reason(done)}")
    return sorted(name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name)
