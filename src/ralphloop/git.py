"""What the loop asks of git: a cheap snapshot of the workspace and what changed between two.

One `git status --porcelain=v2 --branch -z -uall` call gives both HEAD and every dirty
or untracked path. GIT_OPTIONAL_LOCKS=0 keeps ralph from fighting the agent's own git.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
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


# ---------------------------------------------------------------- whole-workspace captures (progress and retries)

_ATTEMPT_IDENTITY = {
    "GIT_AUTHOR_NAME": "ralph",
    "GIT_AUTHOR_EMAIL": "ralph@localhost",
    "GIT_COMMITTER_NAME": "ralph",
    "GIT_COMMITTER_EMAIL": "ralph@localhost",
}


@dataclass(frozen=True, slots=True)
class WorkTree:
    """The workspace at one instant as git objects: HEAD, the tree of every tracked and untracked
    (not ignored) file as it is on disk, and the tree of the index (None when it has conflicts).

    Two captures with the same `tree` hold the same content, whatever the file times say."""

    head: str | None
    tree: str
    index_tree: str | None


def _git_env(root: str, extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, env={**_GIT_ENV, **extra}, capture_output=True, check=False)


def scratch_index(root: str, name: str) -> str | None:
    """A private index file for captures (inside .git), so the user's staging area is never touched."""
    done = _git(root, "rev-parse", "--absolute-git-dir")
    if done.returncode != 0:
        return None
    folder = os.path.join(done.stdout.decode().strip(), "ralph")
    os.makedirs(folder, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)
    return os.path.join(folder, f"{safe}.index")


def capture(root: str, index_file: str) -> WorkTree | None:
    """Capture the workspace (a `git add -A` into the private index, then `write-tree`); None on failure.

    The private index is kept between calls, so unchanged files are not hashed again."""
    try:
        head = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    except FileNotFoundError:
        return None
    private = {"GIT_INDEX_FILE": index_file}
    _git_env(root, private, "add", "-A", "--ignore-errors", "--", ".")
    tree = _git_env(root, private, "write-tree")
    if tree.returncode != 0:
        return None
    index_tree = _git(root, "write-tree")  # the user's staging area as it is now (fails while conflicted)
    return WorkTree(
        head=head.stdout.decode().strip() or None if head.returncode == 0 else None,
        tree=tree.stdout.decode().strip(),
        index_tree=index_tree.stdout.decode().strip() if index_tree.returncode == 0 else None,
    )


def recapture(root: str, index_file: str, base: WorkTree, paths: Sequence[str]) -> WorkTree | None:
    """`base` with `paths` (from the repository's top) read again into the private index: two cheap git
    calls instead of a walk of every file. Only for files nothing but ralph touched since `base`."""
    private = {"GIT_INDEX_FILE": index_file}
    listed = "".join(f"{path}\0" for path in paths).encode("utf-8", "surrogateescape")
    added = subprocess.run(
        ["git", "-c", "core.literalPathspecs=true", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
        cwd=root,
        env={**_GIT_ENV, **private},
        input=listed,
        capture_output=True,
        check=False,
    )
    tree = _git_env(root, private, "write-tree") if added.returncode == 0 else None
    if tree is None or tree.returncode != 0:
        return None
    return WorkTree(head=base.head, tree=tree.stdout.decode().strip(), index_tree=base.index_tree)


def changed_between(root: str, before: WorkTree, after: WorkTree) -> list[str]:
    """Paths whose content differs between two captures (commits and uncommitted work alike)."""
    if before.tree == after.tree:
        return []
    done = _git(root, "diff-tree", "-r", "--name-only", "-z", "--no-renames", before.tree, after.tree)
    return sorted(name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name)


@dataclass(frozen=True, slots=True)
class SavedAttempt:
    ref: str
    commit: str
    patch: str | None  # the patch file, None when it could not be written


def save_attempt(root: str, before: WorkTree, after: WorkTree, ref: str, message: str, patch_path: str) -> SavedAttempt:
    """Keep a failed attempt's work before it is undone: a commit under `ref` (its parent is HEAD as
    the agent left it, so its own commits stay reachable too) and a binary patch from the start."""
    parents = ("-p", after.head) if after.head else ()
    made = _git_env(root, _ATTEMPT_IDENTITY, "commit-tree", after.tree, *parents, "-m", message)
    if made.returncode != 0:
        raise OSError(f"git commit-tree failed: {made.stderr.decode(errors='replace').strip()}")
    commit = made.stdout.decode().strip()
    stored = _git(root, "update-ref", "-m", message, ref, commit)
    if stored.returncode != 0:
        raise OSError(f"git update-ref {ref} failed: {stored.stderr.decode(errors='replace').strip()}")
    diff = _git(root, "diff", "--binary", "--no-color", before.tree, after.tree)
    patch: str | None = patch_path
    try:
        with open(patch_path, "wb") as handle:
            handle.write(diff.stdout)
    except OSError:
        patch = None
    return SavedAttempt(ref=ref, commit=commit, patch=patch)


def restore(root: str, before: WorkTree, after: WorkTree) -> None:
    """Put the workspace back as `before` captured it: branch, files (untracked ones included) and
    the staging area. Ignored files (ralph's runtime files among them) are left alone.

    Save the attempt first (save_attempt): this discards everything done since `before`."""
    if after.head != before.head:
        if before.head:
            _checked(root, "reset", "-q", "--soft", before.head)
        else:
            _checked(root, "update-ref", "-d", "HEAD")
    # Track every current file in the index, so that read-tree -u removes the ones `before` did not have.
    _checked(root, "add", "-A", "--ignore-errors", "--", ".", allow_failure=True)
    _checked(root, "read-tree", "--reset", "-u", before.tree)
    if before.index_tree:
        _checked(root, "read-tree", before.index_tree)
    elif before.head:
        _checked(root, "read-tree", before.head)
    else:
        _checked(root, "read-tree", "--empty")
    _git(root, "update-index", "-q", "--refresh")


def _checked(root: str, *args: str, allow_failure: bool = False) -> None:
    done = _git(root, *args)
    if done.returncode != 0 and not allow_failure:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise OSError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {done.returncode}'}")


# ---------------------------------------------------------------- preflight, branch, auto-commit (seeds 003, 004)


@dataclass(frozen=True, slots=True)
class Preflight:
    """What the checks before the first iteration found: an error stops the run, warnings do not."""

    error: str | None
    warnings: tuple[str, ...] = ()


_SHOWN = 5  # paths named in a warning


def preflight(root: str, runtime: Sequence[str]) -> Preflight:
    """Seed 004's checks: a repository, on a branch, with an identity to commit as; uncommitted or
    untracked files are a warning. `runtime` holds paths (relative to the repository) of ralph's
    own files, which are never the user's uncommitted work."""
    if not is_repo(root):
        return Preflight(
            f"{root}: not a git repository. Make it one: git init && git add -A && git commit -m 'initial' "
            "(or set git.require: false in .ralph/config.yaml to run without git: no commits, no undo)"
        )
    head = _git(root, "symbolic-ref", "-q", "--short", "HEAD")
    if head.returncode != 0:
        return Preflight(
            "the repository is in detached HEAD state: check out a branch first (git switch -c NAME or git switch main)"
        )
    for key, env_name in (("user.name", "GIT_AUTHOR_NAME"), ("user.email", "GIT_AUTHOR_EMAIL")):
        if not os.environ.get(env_name, "").strip() and not config_value(root, key):
            example = "Your Name" if key == "user.name" else "you@example.com"
            return Preflight(f'git {key} is not configured: run git config --global {key} "{example}"')
    snap = snapshot(root)
    dirty = sorted(path for path in (snap.entries if snap else {}) if not _is_under(path, runtime))
    untracked = [path for path in dirty if snap and snap.entries[path].startswith("?")]
    changed = [path for path in dirty if path not in set(untracked)]
    warnings = []
    if changed:
        warnings.append(f"{_count(changed, 'uncommitted change')} in the working tree: {_names(changed)}")
    if untracked:
        warnings.append(f"{_count(untracked, 'untracked file')}: {_names(untracked)}")
    return Preflight(None, tuple(warnings))


def _count(items: list[str], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _names(paths: list[str]) -> str:
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return ", ".join(paths[:_SHOWN]) + more


def _is_under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in prefixes)


def config_value(root: str, key: str) -> str:
    done = _git(root, "config", "--get", key)
    return done.stdout.decode(errors="replace").strip() if done.returncode == 0 else ""


def current_branch(root: str) -> str | None:
    done = _git(root, "symbolic-ref", "-q", "--short", "HEAD")
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def valid_branch_name(root: str, name: str) -> bool:
    return _git(root, "check-ref-format", "--branch", name).returncode == 0 and not name.startswith("-")


def switch_branch(root: str, name: str) -> str:
    """Work on branch `name`: switch to it, or create it from HEAD. Never with --force: git refuses
    to switch when that would overwrite uncommitted work, and then nothing has changed.

    Returns what was done, for the user; raises OSError with git's reason when it cannot be done."""
    if current_branch(root) == name:
        return f"on branch {name}"
    exists = _git(root, "rev-parse", "--verify", "-q", f"refs/heads/{name}").returncode == 0
    done = _git(root, "switch", name) if exists else _git(root, "switch", "-c", name)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
        reason = "; ".join(lines[:3]) or f"exit {done.returncode}"
        raise OSError(f"cannot switch to branch {name}: {reason}")
    return f"switched to branch {name}" if exists else f"created branch {name}"


def commit_paths(top: str, names: Sequence[str], message: str) -> str | None:
    """Stage exactly `names` (paths from the repository's top `top`: changed, new or deleted) and commit
    them with the user's identity and hooks; the user's other uncommitted work stays as it was.

    Returns the new commit, or None when there was nothing to commit. Raises OSError when git refuses
    (a failing pre-commit hook, say); the paths are unstaged again then."""
    if not names:
        return None
    listed = "".join(f"{name}\0" for name in names).encode("utf-8", "surrogateescape")

    def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=top, env=_GIT_ENV, input=stdin, capture_output=True, check=False)

    # literal pathspecs from stdin: no glob, no magic, no argv length limit
    literal = ("--pathspec-from-file=-", "--pathspec-file-nul")
    staged = run("-c", "core.literalPathspecs=true", "add", "-A", *literal, stdin=listed)
    if staged.returncode != 0:
        raise OSError(f"git add failed: {_last_line(staged)}")
    if run("diff", "--cached", "--quiet").returncode == 0:
        return None
    done = run("commit", "-q", "-m", message)
    if done.returncode != 0:
        if run("rev-parse", "--verify", "-q", "HEAD").returncode == 0:
            run("-c", "core.literalPathspecs=true", "reset", "-q", *literal, stdin=listed)
        raise OSError(f"git commit failed: {_last_line(done)}")
    head = run("rev-parse", "HEAD")
    return head.stdout.decode().strip() or None


def _last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"
