"""The git a parallel run does (docs/parallel.md): worktrees and branches of its loops, the rebase of a finished
story, the compare-and-swap that moves the target branch, and which worktree has a branch checked out.
Every step raises GitStep with git's reason; none ever forces a branch that moved under it."""

from __future__ import annotations

import contextlib
import functools
import os

from ralphloop.core.errors import RalphError
from ralphloop.state.fleet import loop_folder_name
from ralphloop.workspace import git, gitcache, objects

LOOP_BRANCHES = "ralph-loops"  # not under the feature branch's own name: git cannot have both `a/b` and `a/b/c`
INTEGRATION = "ralph-integration"


class GitStep(RalphError):
    """A git step of the fleet failed: what, and git's reason."""


def _run(root: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = git.run(root, *args, env=env)
    if done.returncode != 0:
        raise GitStep(f"git {args[0]} failed: {git.reason(done)}")
    return done.stdout.decode("utf-8", "replace").strip()


@functools.cache  # asked for each story's worktree path, dozens of times a merge: one git process each, ~6 ms
def common_dir(root: str) -> str:
    return os.path.abspath(os.path.join(root, _run(root, "rev-parse", "--git-common-dir")))


def loop_branch(feature: str, story: str) -> str:
    return f"{LOOP_BRANCHES}/{loop_folder_name(feature)}/{loop_folder_name(story)}"


def integration_branch(feature: str) -> str:
    return f"{INTEGRATION}/{loop_folder_name(feature)}"


def worktree_dir(root: str, feature: str, story: str) -> str:
    """Outside the user's tree (an agent's `git add -A` or a test runner there never sees it)."""
    return os.path.join(common_dir(root), "ralph-worktrees", loop_folder_name(feature), loop_folder_name(story))


def head_of(root: str, ref: str) -> str | None:
    # HEAD or a branch: read from its files, without a git process (~3 ms each)
    if ref == "HEAD" or ref.startswith("refs/heads/"):
        known, commit = gitcache.worktree_head(root) if ref == "HEAD" else gitcache.read_branch(common_dir(root), ref)
        if known:
            return commit
    done = git.run(root, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def tip_of(root: str, branch: str) -> str:
    """The commit `branch` is at; GitStep naming it when it is gone (deleted by hand during the run)."""
    tip = head_of(root, f"refs/heads/{branch}")
    if tip is None:
        raise GitStep(f"branch {branch} is gone: the parallel run merges into it (restore it, then run again)")
    return tip


def blob(root: str, ref: str, rel: str) -> bytes | None:
    """`git show REF:REL`'s bytes (None when it fails); read from loose objects when it can be, without git."""
    known, content = _loose_blob(root, ref, rel)
    if known:
        return content
    done = git.run(root, "show", f"{ref}:{rel}")
    return done.stdout if done.returncode == 0 else None


def _loose_blob(root: str, ref: str, rel: str) -> tuple[bool, bytes | None]:
    """`blob`, as (known, content), from the refs' files and loose objects: a task file just committed, and the
    branches the queue just moved, are loose (~3 ms a `git show` saved, a dozen a run and three a merge)."""
    dirs = gitcache.worktree_dirs(root)
    common = dirs[1] if dirs is not None else common_dir(root)
    if ref == "HEAD":
        known, commit = gitcache.head_in(*dirs) if dirs is not None else (False, None)
    elif ref.startswith("refs/heads/"):
        known, commit = gitcache.read_branch(common, ref)
    else:
        known, commit = gitcache.is_oid(ref), ref
    store = objects.Store.of(common) if known and commit else None
    if store is None or commit is None:
        return known and commit is None, None  # no such branch: git show fails, nothing to show
    return objects.blob_at(store, commit, rel)


def checked_out(root: str) -> dict[str, str]:
    """Branch (refs/heads/...) → the worktree that has it checked out."""
    found: dict[str, str] = {}
    where = ""
    for line in _run(root, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            where = line.removeprefix("worktree ")
        elif line.startswith("branch "):
            found[line.removeprefix("branch ")] = where
    return found


def make_branch(root: str, branch: str, at: str) -> None:
    """ralph's own integration branch at least at `at`: made there, or brought up to it when it is behind; one that
    holds work of its own (merged, not yet brought in) is left as it is, and the queue rebases onto it."""
    held = head_of(root, f"refs/heads/{branch}")
    if held is None:
        _run(root, "branch", branch, at)
    elif held != at and contains(root, held, at):
        compare_and_swap(root, branch, at, held, "ralph: the integration branch brought up to the feature branch")


def same_folder(one: str, other: str) -> bool:
    return os.path.realpath(one) == os.path.realpath(other)


def add_worktree(root: str, path: str, branch: str, base: str) -> None:
    """A worktree at `path` on a new branch from `base`; one left by a killed run is taken as it is."""
    if os.path.isdir(path) and head_of(path, "HEAD") is not None:
        return
    _forget(root, path)  # a folder removed by hand leaves git's record of it behind
    exists = head_of(root, f"refs/heads/{branch}") is not None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if exists:
        _run(root, "worktree", "add", "-q", path, branch)
    else:
        _run(root, "worktree", "add", "-q", "-b", branch, path, base)


def remove_worktree(root: str, path: str, branch: str | None) -> None:
    if os.path.isdir(path):
        _run(root, "worktree", "remove", "--force", path)
    else:
        _forget(root, path)  # a folder removed by hand (or by a kill mid-removal)
    if branch:
        done = git.run(root, "branch", "-q", "-D", branch)
        if done.returncode != 0 and head_of(root, f"refs/heads/{branch}") is not None:
            raise GitStep(f"git branch -D failed: {git.reason(done)}")


def _forget(root: str, path: str) -> None:
    """git's record of ralph's worktree at `path` dropped when its folder is gone: that one only (`git worktree
    prune` would drop the user's own worktrees whose folders are missing too, say on a disk not mounted now)."""
    if _recorded(root, path) is False:
        return  # none of git's worktree records names it (read from their files: no `git worktree list`)
    if os.path.realpath(path) in {os.path.realpath(where) for where in _worktrees(root)}:
        _run(root, "worktree", "remove", "--force", path)


def _recorded(root: str, path: str) -> bool | None:
    """Whether one of git's linked-worktree records (`<common>/worktrees/*/gitdir`, which `git worktree list`
    reads) names `path`; None when a record cannot be read here (git is asked then)."""
    records = os.path.join(common_dir(root), "worktrees")
    try:
        names = os.listdir(records)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    wanted = os.path.realpath(os.path.join(path, ".git"))
    for name in names:
        pointer = gitcache.small_text(os.path.join(records, name, "gitdir"))
        if pointer is None:
            return None
        if os.path.realpath(os.path.join(records, name, pointer)) == wanted:
            return True
    return False


def _worktrees(root: str) -> list[str]:
    listed = _run(root, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in listed if line.startswith("worktree ")]


def abort_merge(worktree: str) -> None:
    """A merge the conflict's resolver left (fleet/resolve.py), cut short by a kill: undone."""
    if merge_in_progress(worktree):
        git.run(worktree, "merge", "--abort")


def git_dir(worktree: str) -> str:
    """The worktree's own git folder: read from its files where they say it, asked of git otherwise."""
    dirs = gitcache.worktree_dirs(worktree)
    return dirs[0] if dirs is not None else _run(worktree, "rev-parse", "--absolute-git-dir")


def rebase_in_progress(worktree: str) -> bool:
    gitdir = git_dir(worktree)
    return any(os.path.exists(os.path.join(gitdir, name)) for name in ("rebase-merge", "rebase-apply"))


def merge_in_progress(worktree: str) -> bool:
    gitdir = git_dir(worktree)
    return os.path.exists(os.path.join(gitdir, "MERGE_HEAD"))


def rebase(worktree: str, onto: str) -> bool:
    """The worktree's branch rebased onto `onto`; False on a conflict (the rebase aborted: nothing changed)."""
    done = git.run(worktree, "rebase", "-q", onto)
    if done.returncode == 0:
        return True
    if rebase_in_progress(worktree):
        _run(worktree, "rebase", "--abort")
        return False
    raise GitStep(f"git rebase failed: {git.reason(done)}")


def abort_rebase(worktree: str, leftovers: str) -> None:
    """A rebase a kill cut short, undone: the branch back where it was. When the abort's reset is refused (files
    in its way that the rebase never had), the rebase is left as it stands, what the worktree holds is kept under
    the `leftovers` ref, and the branch is checked out again."""
    if not rebase_in_progress(worktree):
        return
    gitdir = git_dir(worktree)
    if git.run(worktree, "rebase", "--abort").returncode == 0:
        return
    branch = ""
    for state in ("rebase-merge", "rebase-apply"):
        with contextlib.suppress(OSError), open(os.path.join(gitdir, state, "head-name"), encoding="utf-8") as handle:
            branch = handle.read().strip().removeprefix("refs/heads/")
    _run(worktree, "rebase", "--quit")
    save_leftovers(worktree, worktree, leftovers)  # refs are the repository's, whichever worktree writes them
    if branch:
        _run(worktree, "switch", "-q", "-f", branch)


def reset_to(worktree: str, commit: str) -> None:
    """The worktree's branch and files at `commit` (its own work saved first by the caller)."""
    _run(worktree, "reset", "-q", "--hard", commit)


def restore(worktree: str, rels: list[str]) -> None:
    """Tracked files back to HEAD's version (a child's own pass mark and progress, which the coordinator owns)."""
    present = [rel for rel in rels if blob(worktree, "HEAD", rel) is not None]
    if present:
        _run(worktree, "checkout", "-q", "HEAD", "--", *present)


def dirty(worktree: str) -> bool:
    return bool(_run(worktree, "status", "--porcelain", "--untracked-files=no"))


def commit_all(worktree: str, rels: list[str], message: str) -> str | None:
    try:
        return git.commit_paths(worktree, rels, message)
    except OSError as exc:
        raise GitStep(str(exc)) from None


def save_leftovers(root: str, tree: str, ref: str) -> bool:
    """What the worktree holds beyond HEAD (changes and untracked files, not ignored ones) kept as a commit under
    `ref`, then the worktree made HEAD exactly: nothing a loop left is lost, and nothing of it is in the way of
    the rebase. False when there was nothing."""
    if not _run(tree, "status", "--porcelain"):
        return False
    head = _run(tree, "rev-parse", "HEAD")
    index = os.path.join(git_dir(tree), "ralph-leftovers.index")
    env = {"GIT_INDEX_FILE": index}
    _run(tree, "read-tree", head, env=env)
    _run(tree, "add", "-A", env=env)
    kept = _run(tree, "write-tree", env=env)
    saved = _run(tree, "commit-tree", kept, "-p", head, "-m", "ralph: left in the worktree", env=env)
    with contextlib.suppress(OSError):
        os.unlink(index)
    keep(root, ref, saved)
    _run(tree, "reset", "-q", "--hard", head)
    _run(tree, "clean", "-q", "-f", "-d")  # not -x: ignored files (ralph's runtime records among them) stay
    return True


def compare_and_swap(root: str, branch: str, new: str, old: str, why: str) -> bool:
    """Move `branch` from `old` to `new`; False when it no longer is at `old` (something else moved it)."""
    done = git.run(root, "update-ref", "-m", why, f"refs/heads/{branch}", new, old)
    if done.returncode == 0:
        return True
    if head_of(root, f"refs/heads/{branch}") != old:
        return False
    raise GitStep(f"git update-ref failed: {git.reason(done)}")


def fast_forward_checked_out(worktree: str, new: str) -> bool:
    """The user's own worktree brought to `new` by `git merge --ff-only` (the user asked for it); False when it
    has uncommitted changes (never touched then) or cannot fast-forward."""
    if dirty(worktree):
        return False
    return git.run(worktree, "merge", "-q", "--ff-only", new).returncode == 0


def attempts_prefix(feature: str, story: str) -> str:
    return f"refs/ralph/attempts/{loop_folder_name(feature)}/{loop_folder_name(story)}"


def save_attempt(root: str, feature: str, story: str, attempt: int, head: str) -> str:
    """A ref that keeps a story's work the queue could not land (a conflict, a gate after the rebase)."""
    return keep(root, f"{attempts_prefix(feature, story)}-merge-{attempt}", head)


def keep(root: str, ref: str, commit: str) -> str:
    """`commit` kept under `ref`, or under `ref.2`, `ref.3`... when an earlier run's is there: none is overwritten."""
    name, number = ref, 1
    while (held := head_of(root, name)) is not None and held != commit:
        number += 1
        name = f"{ref}.{number}"
    _run(root, "update-ref", name, commit)
    return name


def contains(root: str, commit: str, ref: str) -> bool:
    try:
        return git.is_ancestor(root, commit, ref)
    except OSError:
        return False


def merge_base(root: str, one: str, other: str) -> str | None:
    done = git.run(root, "merge-base", one, other)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def strip_paths(tree: str, base: str, rels: list[str]) -> str | None:
    """The worktree's branch (base..HEAD) made again without its changes to `rels`: those files are the
    coordinator's (the pass marks, the progress entries), which an agent's own `git add -A` commits too.
    Each commit keeps its message and author; one left empty is dropped. Returns the new head, or None when
    no commit touched them (nothing is rewritten)."""
    if not _run(tree, "log", "--format=%H", f"{base}..HEAD", "--", *rels):
        return None
    commits = _run(tree, "rev-list", "--reverse", f"{base}..HEAD").split()
    trees = _stripped_from_objects(tree, base, rels, commits) or _stripped_by_git(tree, base, rels, commits)
    parent, parent_tree = base, trees[0]
    for commit, made in zip(commits, trees[1:], strict=True):
        if made == parent_tree:
            continue
        author = _run(tree, "log", "-1", "--format=%an%x00%ae%x00%aI", commit).split("\0")
        message = _run(tree, "log", "-1", "--format=%B", commit)
        who = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_AUTHOR_DATE": author[2]}
        parent = _run(tree, "commit-tree", made, "-p", parent, "-m", message or "(no message)", env=who)
        parent_tree = made
    return parent


def _stripped_from_objects(tree: str, base: str, rels: list[str], commits: list[str]) -> list[str] | None:
    """Base's tree, then each commit's with `rels` as base has them, made of loose objects without a git process
    (five a commit otherwise); None when an object is not loose or a tree cannot be made so: git makes them."""
    store = objects.Store.of(common_dir(tree)) if len(base) == 40 else None
    kept = objects.entries_in(store, base, rels) if store is not None else None
    top = objects.commit_tree(store, base) if store is not None else None
    if store is None or kept is None or top is None:
        return None
    trees = [top]
    for commit in commits:
        own = objects.commit_tree(store, commit)
        made = objects.with_entries(store, own, dict(kept)) if own is not None else None
        if made is None:
            return None
        trees.append(made)
    return trees


def _stripped_by_git(tree: str, base: str, rels: list[str], commits: list[str]) -> list[str]:
    """`_stripped_from_objects`' trees, made by git through an index of ralph's own."""
    index = os.path.join(git_dir(tree), "ralph-strip.index")
    env = {"GIT_INDEX_FILE": index}
    entries = {rel: _run(tree, "ls-tree", base, "--", rel) for rel in rels}
    trees = [_run(tree, "rev-parse", f"{base}^{{tree}}")]
    for commit in commits:
        _run(tree, "read-tree", commit, env=env)
        for rel, entry in entries.items():
            if entry:
                mode, _, rest = entry.partition(" ")
                sha = rest.split()[1]
                _run(tree, "update-index", "--add", "--cacheinfo", f"{mode},{sha},{rel}", env=env)
            else:
                _run(tree, "update-index", "--force-remove", "--", rel, env=env)
        trees.append(_run(tree, "write-tree", env=env))
    with contextlib.suppress(OSError):
        os.unlink(index)
    return trees
