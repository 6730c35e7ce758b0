"""Whole-workspace captures as git trees: what an iteration changed, and undoing a failed attempt.

A capture writes every file under the project root (tracked or not, ignored ones aside) as a tree
through a private index kept in .git/ralph/, so the user's staging area is never touched; see gitcache
for what makes the next capture cheap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence

from msgspec import Struct

from ralphloop import gitcache
from ralphloop.git import parse_status, run

_ATTEMPT_IDENTITY = {
    "GIT_AUTHOR_NAME": "ralph",
    "GIT_AUTHOR_EMAIL": "ralph@localhost",
    "GIT_COMMITTER_NAME": "ralph",
    "GIT_COMMITTER_EMAIL": "ralph@localhost",
}


class WorkTree(Struct, frozen=True):
    """The workspace at one instant as git objects: HEAD, the tree of every tracked and untracked
    (not ignored) file as it is on disk, and the tree of the index (None when it has conflicts).

    Two captures with the same `tree` hold the same content, whatever the file times say."""

    head: str | None
    tree: str
    index_tree: str | None
    branch: str | None = None  # the ref HEAD names (refs/heads/...): an undo goes back to it


def head_moved(start: WorkTree | None, end: WorkTree | None) -> str | None:
    """HEAD at `end`, short, when it moved since `start` (the agent committed): None when it did not."""
    moved = end is not None and end.head and (start is None or end.head != start.head)
    return end.head[:12] if moved and end is not None and end.head else None


def scratch_index(root: str, name: str) -> str | None:
    """A private index file for captures (inside .git), so the user's staging area is never touched."""
    done = run(root, "rev-parse", *gitcache.LAYOUT_ARGS)
    layout = gitcache.parse_layout(root, done.stdout) if done.returncode == 0 else None
    if layout is None:
        return None
    folder = os.path.join(layout.git_dir, "ralph")
    os.makedirs(folder, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)
    index_file = os.path.join(folder, f"{safe}.index")
    gitcache.memo(index_file, layout)
    return index_file


def capture(root: str, index_file: str) -> WorkTree | None:
    """Capture the workspace (every file under `root` but ignored ones) as a tree in the private index;
    None on failure. Cheap when little changed: see gitcache."""
    memo = gitcache.memo(index_file)
    if memo is None:
        try:
            done = run(root, "rev-parse", *gitcache.LAYOUT_ARGS)
        except FileNotFoundError:
            return None
        memo = gitcache.memo(index_file, gitcache.parse_layout(root, done.stdout) if done.returncode == 0 else None)
        if memo is None:
            return None
    captured = _capture_tree(root, memo, index_file)
    if captured is None and gitcache.discard(index_file):
        # A private index git cannot use (its shared part or its objects pruned, say): made again from the files.
        memo.tree = None
        captured = _capture_tree(root, memo, index_file)
    if captured is None:
        gitcache.forget(index_file)
        return None
    head, tree = captured
    return WorkTree(head, tree, _user_tree(root, memo), gitcache.head_ref(memo.layout))


def recapture(root: str, index_file: str, base: WorkTree, paths: Sequence[str]) -> WorkTree | None:
    """capture() when only `paths` (absolute, or from `root`) can have changed since `base`, this index's
    last capture, as when ralph itself wrote them between two iterations: nothing else is looked at.

    Costs `git add` of those paths and `write-tree`, where capture() runs a `git status` of every file;
    falls back to capture() when `base` is not what the private index last held."""
    memo = gitcache.memo(index_file)
    if memo is None or memo.tree is None or memo.tree != base.tree:
        return capture(root, index_file)
    top = os.path.realpath(memo.layout.top)
    inside = [os.path.relpath(os.path.realpath(os.path.join(root, path)), top) for path in paths]
    listed = [path for path in inside if path != ".." and not path.startswith(("../", "/"))]
    private = _private_git(index_file, gitcache.is_big(index_file, gitcache.index_header(index_file)))
    if listed and not _add_paths(memo.layout.top, private, listed):
        return capture(root, index_file)
    tree = private(root, "write-tree") if listed else None
    if tree is not None and tree.returncode != 0:
        gitcache.forget(index_file)
        return None
    if tree is not None:
        memo.tree = tree.stdout.decode().strip()
    layout = memo.layout
    return WorkTree(_head(root, layout), memo.tree, _user_tree(root, memo), gitcache.head_ref(layout))


def _capture_tree(root: str, memo: gitcache.Memo, index_file: str) -> tuple[str | None, str] | None:
    """HEAD and the tree of the workspace, written from the private index brought up to date."""
    header = gitcache.index_header(index_file)
    big = gitcache.is_big(index_file, header)
    private = _private_git(index_file, big)
    if header is None:  # no private index yet: every file is added
        head, state = _head(root, memo.layout), _UNKNOWN
    elif not big:
        head, state = _head(root, memo.layout), _add_all(root, private)
    else:
        if header[0] != gitcache.INDEX_VERSION:  # made by an older ralph
            private(root, "update-index", "--index-version", str(gitcache.INDEX_VERSION))
        head, state = _status_and_add(memo.layout, private)
    if state == _SAME and memo.tree is not None:
        return head, memo.tree
    if state == _UNKNOWN:
        private(root, "add", "-A", "--ignore-errors", "--", ".")
    tree = private(root, "write-tree")
    if tree.returncode != 0:
        return None
    memo.tree = tree.stdout.decode().strip()
    return head, memo.tree


# What a first step learnt of the private index: nothing changed, paths were added, or nothing is known.
_SAME, _ADDED, _UNKNOWN = "same", "added", "unknown"
PrivateGit = Callable[..., subprocess.CompletedProcess[bytes]]


def _private_git(index_file: str, big: bool) -> PrivateGit:
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
    """`git add -A` of the whole project: in a small one, cheaper than a `git status` first."""
    done = private(root, "add", "-A", "--verbose", "--ignore-errors", "--", ".")
    # --verbose names each path added or removed: silence means the index holds what it held.
    return _SAME if done.returncode in {0, 1} and not done.stdout.strip() else _ADDED


def _status_and_add(layout: gitcache.Layout, private: PrivateGit) -> tuple[str | None, str]:
    """`git status` against the private index (it reads only changed folders), then adds what it lists."""
    # Limiting status to a folder turns git's untracked cache off: only when ralph runs below the top.
    where = ("--", f":(literal){layout.prefix}") if layout.prefix else ()
    status = private(layout.top, *gitcache.STATUS_ARGS, *where)
    if status.returncode != 0:
        return _head(layout.top, layout), _UNKNOWN
    snap = parse_status(status.stdout)
    listed = gitcache.changed_paths(snap.entries, layout.prefix)
    if not listed:
        return snap.head, _SAME
    return snap.head, _ADDED if _add_paths(layout.top, private, listed) else _UNKNOWN


def _add_paths(top: str, private: PrivateGit, paths: list[str]) -> bool:
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
    tree = done.stdout.decode().strip() if done.returncode == 0 else None
    # write-tree may itself rewrite the index (to store its cache of trees): remember it once it does not.
    kept = tree is not None and before == gitcache.stamp(memo.layout.user_index)
    memo.user_stamp, memo.user_tree = (before, tree) if kept else (None, None)
    return tree


def blob(root: str, tree: str, rel: str) -> bytes | None:
    """The content of `rel` (a path from the repository's top) in `tree`; None when the tree does not hold it."""
    done = run(root, "cat-file", "blob", f"{tree}:{rel}")
    return done.stdout if done.returncode == 0 else None


def changed_between(root: str, before: WorkTree, after: WorkTree) -> list[str]:
    """Paths whose content differs between two captures (commits and uncommitted work alike)."""
    if before.tree == after.tree:
        return []
    done = run(root, "diff-tree", "-r", "--name-only", "-z", "--no-renames", before.tree, after.tree)
    return sorted(name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name)


class SavedAttempt(Struct, frozen=True):
    ref: str
    commit: str
    patch: str | None  # the patch file, None when it could not be written


def save_attempt(root: str, before: WorkTree, after: WorkTree, ref: str, message: str, patch_path: str) -> SavedAttempt:
    """Keep a failed attempt's work before it is undone: a commit under `ref` (its parent is HEAD as
    the agent left it, so its own commits stay reachable too) and a binary patch from the start."""
    parents = ("-p", after.head) if after.head else ()
    made = run(root, "commit-tree", after.tree, *parents, "-m", message, env=_ATTEMPT_IDENTITY)
    if made.returncode != 0:
        raise OSError(f"git commit-tree failed: {made.stderr.decode(errors='replace').strip()}")
    commit = made.stdout.decode().strip()
    stored = run(root, "update-ref", "-m", message, ref, commit)
    if stored.returncode != 0:
        raise OSError(f"git update-ref {ref} failed: {stored.stderr.decode(errors='replace').strip()}")
    diff = run(root, "diff", "--binary", "--no-color", before.tree, after.tree)
    patch: str | None = patch_path
    try:
        with open(patch_path, "wb") as handle:
            handle.write(diff.stdout)
    except OSError:
        patch = None
    return SavedAttempt(ref=ref, commit=commit, patch=patch)


def saved_attempt(root: str, ref: str, patch_path: str) -> SavedAttempt | None:
    """The attempt already saved under `ref`, if any (so that finishing an interrupted undo never replaces
    the whole attempt with what was left of it)."""
    found = run(root, "rev-parse", "--verify", "-q", ref + "^{commit}")
    if found.returncode != 0:
        return None
    return SavedAttempt(ref, found.stdout.decode().strip(), patch_path if os.path.isfile(patch_path) else None)


def restore(root: str, before: WorkTree, index_file: str) -> None:
    """Put the workspace back as `before` (captured with `index_file`) holds it: the branch (checked out again
    when the agent switched), every file under `root` (untracked ones included) and the staging area. Ignored
    files (ralph's runtime files among them) and files outside `root` are left alone.

    Save the attempt first (save_attempt): this discards everything done since `before`."""
    now = capture(root, index_file)  # every file as it is now, with its stat: only changed ones are written back
    if now is None:
        raise OSError("git could not read the workspace")
    if before.branch and before.head and now.branch != before.branch:  # the agent left the run's branch
        _checked(root, "update-ref", before.branch, before.head)
        _checked(root, "symbolic-ref", "HEAD", before.branch)
    elif now.head != before.head:
        if before.head:
            _checked(root, "reset", "-q", "--soft", before.head)
        else:
            _checked(root, "update-ref", "-d", "HEAD")
    # A copy of the private index (it holds `now`) goes to `before`: read-tree -u writes the files that differ
    # and removes those `before` did not have; the copy, with their new stat, is the private index from then on.
    undo = index_file + ".undo"
    shutil.copyfile(index_file, undo)
    private = _private_git(undo, gitcache.is_big(index_file, gitcache.index_header(index_file)))
    done = private(root, "read-tree", "--reset", "-u", before.tree)
    if done.returncode != 0:
        gitcache.discard(undo)
        raise OSError(f"git read-tree failed: {_last_line(done)}")
    os.replace(undo, index_file)
    memo = gitcache.memo(index_file)
    if memo is not None:
        memo.tree = before.tree
    staged = before.index_tree or before.head
    # -m keeps the stat of entries whose content is unchanged, so the refresh hashes only what was written back;
    # a conflicted staging area refuses -m, and is replaced whole.
    if staged is None:
        _checked(root, "read-tree", "--empty")
    elif run(root, "read-tree", "-m", staged).returncode != 0:
        _checked(root, "read-tree", staged)
    run(root, "update-index", "-q", "--refresh")


def _last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def _checked(root: str, *args: str) -> None:
    done = run(root, *args)
    if done.returncode != 0:
        raise OSError(f"git {args[0]} failed: {_last_line(done)}")
