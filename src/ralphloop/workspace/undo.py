"""A failed attempt saved, then undone: the workspace put back as the iteration's start capture holds it
(what git is doing, HEAD and its branch, the files, the staging area), then captured again to check that it is.
Also `keep`, which saves a capture under a ref: the start of an iteration whose agent rewrote history.
"""

from __future__ import annotations

import contextlib
import os
import shutil

from msgspec import Struct

from ralphloop.workspace import gitcache, objects
from ralphloop.workspace.captures import WorkTree, add_paths, capture, changed_between, private_git
from ralphloop.workspace.git import reason, run

_IDENTITY = {
    "GIT_AUTHOR_NAME": "ralph",
    "GIT_AUTHOR_EMAIL": "ralph@localhost",
    "GIT_COMMITTER_NAME": "ralph",
    "GIT_COMMITTER_EMAIL": "ralph@localhost",
}
_REFLOG = "ralph: undo of a failed attempt"
# Each operation git can leave waiting for the user, forgotten: HEAD, files and index are put back afterwards.
_QUIT = {name: (name, "--quit") for name in ("merge", "rebase", "am", "cherry-pick", "revert")}
# What a stopped merge or rebase leaves beside its state, which `--quit` keeps (and a later `git commit` would
# take its message from).
_LEFTOVERS = ("MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "REBASE_HEAD", "SQUASH_MSG")


class SavedAttempt(Struct, frozen=True):
    ref: str
    commit: str
    patch: str | None  # the patch file, None when it could not be written


def keep(root: str, work: WorkTree, ref: str, message: str) -> str:
    """A commit of the files `work` holds (its parent: HEAD as it was) stored under `ref`; returns the commit.
    Raises OSError when git refuses."""
    parents = ("-p", work.head) if work.head else ()
    made = run(root, "commit-tree", work.tree, *parents, "-m", message, env=_IDENTITY)
    if made.returncode != 0:
        raise OSError(f"git commit-tree failed: {reason(made)}")
    commit = made.stdout.decode().strip()
    stored = run(root, "update-ref", "-m", message, ref, commit)
    if stored.returncode != 0:
        raise OSError(f"git update-ref {ref} failed: {reason(stored)}")
    return commit


def save_attempt(root: str, before: WorkTree, after: WorkTree, ref: str, message: str, patch_path: str) -> SavedAttempt:
    """Keep a failed attempt's work before it is undone: a commit under `ref` (its parent is HEAD as
    the agent left it, so its own commits stay reachable too) and a binary patch from the start."""
    commit = keep(root, after, ref, message)
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


def restore(root: str, before: WorkTree, index_file: str, now: WorkTree | None = None) -> WorkTree:
    """Put the workspace back as `before` (captured with `index_file`) holds it: a merge, rebase, cherry-pick,
    revert or am the agent left waiting forgotten; the branch at its commit and checked out again (when the agent
    switched, detached or moved it); every file under `root` (untracked ones included); the staging area. Ignored
    files (ralph's runtime files among them) and files outside `root` are left alone. A capture then checks it,
    and is returned: the workspace as it now is.

    `now`: the workspace as it is, when the caller has just captured it (the iteration's own capture); otherwise it
    is captured first. Raises OSError naming what git refused, or what still differs; save the attempt first
    (save_attempt): this discards everything done since `before`."""
    if now is None:
        now = capture(root, index_file)  # every file as it is now, with its stat: only changed ones are written back
    memo = gitcache.memo(index_file)
    assert memo is not None  # made by the capture
    _quit_operations(root, memo.layout, before.operation)
    _restore_head(root, before, now)
    _restore_files(root, before, index_file)
    _restore_staged(root, before)  # always: an intent-to-add entry or stale stat data does not show in its tree
    after = capture(root, index_file)
    wrong = _differences(root, before, after)
    if wrong:
        raise OSError(f"after the undo, {'; '.join(wrong)}")
    return after


def _quit_operations(root: str, layout: gitcache.Layout, kept: str | None) -> None:
    """Forget what git was doing when it is not what it was doing at the start (`kept`)."""
    for _ in _QUIT:
        doing = gitcache.operation(layout)
        if doing is None or doing == kept:
            return
        done = run(root, *_QUIT[doing])
        if done.returncode != 0:
            raise OSError(f"git {doing} --quit failed: {reason(done)}")
        for name in _LEFTOVERS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(layout.git_dir, name))
    raise OSError(f"git still has a {gitcache.operation(layout)} in progress")


def _restore_head(root: str, before: WorkTree, now: WorkTree) -> None:
    """HEAD as it was: the run's branch at its commit and checked out, or the commit it was detached at."""
    if before.branch:
        if now.branch != before.branch or now.head != before.head:  # committed, amended, reset or switched
            if before.head:
                _checked(root, "update-ref", "-m", _REFLOG, before.branch, before.head)
            elif run(root, "rev-parse", "--verify", "-q", before.branch).returncode == 0:
                _checked(root, "update-ref", "-m", _REFLOG, "-d", before.branch)  # a branch yet to be born
        if now.branch != before.branch:
            _checked(root, "symbolic-ref", "-m", _REFLOG, "HEAD", before.branch)
    elif before.head and (now.branch or now.head != before.head):
        _checked(root, "update-ref", "--no-deref", "-m", _REFLOG, "HEAD", before.head)


def _restore_files(root: str, before: WorkTree, index_file: str) -> None:
    """The files under `root` as `before` holds them, through a copy of the private index (which holds them as
    they are now): read-tree -u writes the files that differ and removes those `before` did not have; the copy,
    with their new stat, is the private index from then on."""
    undo = index_file + ".undo"
    shutil.copyfile(index_file, undo)
    private = private_git(undo, gitcache.is_big(index_file, gitcache.index_header(index_file)))
    memo = gitcache.memo(index_file)
    new = _derived_new(memo) if memo is not None else []
    if memo is not None and new:
        # The last capture's tree was derived (captures.py): the new files it put in, added to the copy first, as a
        # capture through git would have, so that read-tree takes them back too. (One edited or deleted is
        # rewritten all the same: its stat differs from the copy's entry.)
        add_paths(memo.layout.top, private, new)
    done = private(root, "read-tree", "--reset", "-u", before.tree)
    if done.returncode != 0:
        gitcache.discard(undo)
        raise OSError(f"git read-tree failed: {reason(done)}")
    os.replace(undo, index_file)
    if memo is not None:
        memo.tree, memo.derived = before.tree, None


def _derived_new(memo: gitcache.Memo) -> list[str]:
    """The files the last capture's derived tree holds and the private index does not: all it put in, when the
    index's own tree cannot be read here."""
    if memo.derived is None or memo.derived[0] != memo.tree or memo.tree is None:
        return []
    put = list(memo.derived[2])
    store = objects.Store.of(memo.layout.common_dir)
    held = objects.entries_at(store, memo.tree, put) if store is not None else None
    return put if held is None else [path for path in put if held[path] is None]


def _restore_staged(root: str, before: WorkTree) -> None:
    """The staging area as it was (HEAD's tree when it had conflicts then: those cannot be made again)."""
    staged = before.index_tree or before.head
    # -m keeps the stat of entries whose content is unchanged, so the refresh hashes only what was written back;
    # a conflicted staging area refuses -m, and is replaced whole.
    if staged is None:
        _checked(root, "read-tree", "--empty")
    elif run(root, "read-tree", "-m", staged).returncode != 0:
        _checked(root, "read-tree", staged)
    run(root, "update-index", "-q", "--refresh")


def _differences(root: str, before: WorkTree, after: WorkTree) -> list[str]:
    """What `after` (a capture once the undo is done) still has that `before` had not, in words."""
    found = []
    if (after.branch, after.head) != (before.branch, before.head):
        found.append(f"HEAD is {_where(after)}, not {_where(before)}")
    if after.operation != before.operation:
        found.append(
            f"git's {after.operation or before.operation} is {'in' if after.operation else 'no longer in'} progress"
        )
    if before.index_tree is not None and after.index_tree != before.index_tree:
        found.append("the staging area differs")
    files = changed_between(root, before, after)
    if files:
        more = f" and {len(files) - 5} more" if len(files) > 5 else ""
        found.append(f"{', '.join(files[:5])}{more} still differ{'s' if len(files) == 1 else ''}")
    return found


def _where(work: WorkTree) -> str:
    at = (work.head or "no commit")[:12]
    return f"{work.branch.removeprefix('refs/heads/')} at {at}" if work.branch else f"detached at {at}"


def _checked(root: str, *args: str) -> None:
    done = run(root, *args)
    if done.returncode != 0:
        raise OSError(f"git {args[0]} failed: {reason(done)}")
