"""What the loop asks of git: a cheap snapshot of the workspace and what changed between two.

One `git status --porcelain=v2 --branch -z -uall` call gives both HEAD and every dirty
or untracked path. GIT_OPTIONAL_LOCKS=0 keeps ralph from fighting the agent's own git.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Callable, Sequence

from msgspec import Struct

from ralphloop.files.safe_read import CONFIG_CAP, read_file
from ralphloop.workspace import gitcache

# What ralph adds to git's environment: the rest is ralph's own, as it is when git starts (a process that changes
# its environment after importing this, a warm loop given its run, passes the new one on).
_GIT_ADDS = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# Before every git command of ralph's but the commit the user's hooks are asked for: no hook (reference-transaction
# runs on every ref ralph moves, post-checkout on a switch), no fsmonitor program (status and add run it).
_NO_AGENT_CODE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


class GitSettings(Struct, frozen=True):
    """The `git:` and `branch:` settings (seeds 003, 004): preflight, the branch, commits after iterations."""

    require: bool  # refuse to run outside a repository, or with a broken one
    auto_commit: bool | None  # None: the task format's default (on for TODO.md plan folders, seed 004)
    branch_auto_create: bool | None  # None: switch to prd.json's branchName when it has one
    branch_prefix: str
    # `ralph run --parallel`: the merge queue may fast-forward the feature branch where it is checked out
    # (a clean worktree only); otherwise it lands on an integration branch (docs/parallel.md)
    fast_forward_checked_out: bool = False
    merge_resolve: str = "retry"  # at a conflict: "retry" the story on the new base, or let an "agent" resolve it


class Snapshot(Struct, frozen=True):
    """HEAD (None before the first commit) and each dirty path with its status record."""

    head: str | None
    entries: dict[str, str]


def run(
    root: str, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None, hooks: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """One git command in `root`, its output captured; `env` adds to ralph's git environment. No hook and no
    fsmonitor program runs (an agent can plant both in .git, and ralph's git must never run what it wrote), but
    with `hooks`: the user's commit hooks on an accepted iteration's commit (under --sandbox, .git/hooks and
    .git/config are read-only to the agent: what is there is the user's)."""
    full = {**os.environ, **_GIT_ADDS, **(env or {})}
    argv = ["git", *args] if hooks else ["git", *_NO_AGENT_CODE, *args]
    return subprocess.run(argv, cwd=root, env=full, input=stdin, capture_output=True, check=False)


def is_repo(root: str) -> bool:
    try:
        return run(root, "rev-parse", "--is-inside-work-tree").stdout.strip() == b"true"
    except FileNotFoundError:
        return False


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


_LAYOUTS: dict[str, gitcache.Layout] = {}  # by folder, asked once: several steps of a run's start want it


def layout(root: str) -> gitcache.Layout | None:
    """Where the repository `root` is in keeps things (its top, its git folders, the index), from one
    `git rev-parse` remembered for the process; None outside a repository (or without git)."""
    known = _LAYOUTS.get(root)
    if known is not None:
        return known
    try:
        done = run(root, "rev-parse", *gitcache.LAYOUT_ARGS)
    except FileNotFoundError:
        return None
    found = gitcache.parse_layout(root, done.stdout) if done.returncode == 0 else None
    if found is not None:
        _LAYOUTS[root] = found
    return found


def toplevel(root: str) -> str | None:
    """The top folder of the repository `root` is in; None outside one (or without git)."""
    found = layout(root)
    return found.top if found is not None else None


def git_dir(root: str) -> str | None:
    """This worktree's own git folder (`.git`, or `.git/worktrees/NAME` in a linked worktree); None outside a
    repository."""
    found = layout(root)
    return found.git_dir if found is not None else None


def exclude_paths(root: str, patterns: list[str]) -> bool:
    """Add `patterns` to .git/info/exclude (once each); False when this is not a repository."""
    try:
        done = run(root, "rev-parse", "--git-path", "info/exclude")
    except FileNotFoundError:
        return False
    if done.returncode != 0:
        return False
    path = os.path.join(root, done.stdout.decode().strip())
    present = set((read_file(path, cap=CONFIG_CAP) or b"").decode("utf-8", "replace").splitlines())
    missing = [pattern for pattern in patterns if pattern not in present]
    if missing:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("\n# ralph runtime files\n" + "".join(f"{p}\n" for p in missing))
    return True


# ---------------------------------------------------------------- preflight, branch, auto-commit (seeds 003, 004)


class Preflight(Struct, frozen=True):
    """What the checks before the first iteration found: an error stops the run, warnings do not."""

    error: str | None
    warnings: tuple[str, ...] = ()


_SHOWN = 5  # paths named in a warning


def preflight(root: str, runtime: Sequence[str]) -> Preflight:
    """Seed 004's checks: a repository, on a branch, with an identity to commit as; uncommitted or
    untracked files are a warning. `runtime` holds paths (relative to the repository) of ralph's
    own files, which are never the user's uncommitted work."""
    try:  # one `git status` says whether this is a repository, the branch and what is dirty
        status = run(root, "status", "--porcelain=v2", "--branch", "-z", "-uall")
    except FileNotFoundError:
        status = None
    raw = status.stdout if status is not None and status.returncode == 0 else None
    if raw is None and not is_repo(root):
        return Preflight(
            f"{root}: not a git repository. Make it one: git init && git add -A && git commit -m 'initial' "
            "(or set git.require: false in .ralph/config.yaml to run without git: no commits, no undo)"
        )
    if (_branch_of(raw) if raw is not None else current_branch(root)) is None:
        return Preflight(
            "the repository is in detached HEAD state: check out a branch first (git switch -c NAME or git switch main)"
        )
    missing = _missing_identity(root)
    if missing:
        example = "Your Name" if missing == "user.name" else "you@example.com"
        return Preflight(f'git {missing} is not configured: run git config --global {missing} "{example}"')
    entries = parse_status(raw).entries if raw is not None else {}
    dirty = sorted(path for path in entries if not _is_under(path, runtime))
    untracked = [path for path in dirty if entries[path].startswith("?")]
    changed = [path for path in dirty if path not in set(untracked)]
    warnings = []
    if changed:
        warnings.append(f"{_count(changed, 'uncommitted change')} in the working tree: {_names(changed)}")
    if untracked:
        warnings.append(f"{_count(untracked, 'untracked file')}: {_names(untracked)}")
    return Preflight(None, tuple(warnings))


def _branch_of(raw: bytes) -> str | None:
    """The branch in `git status --porcelain=v2 --branch -z` output; None when HEAD is detached."""
    for record in raw.decode("utf-8", "surrogateescape").split("\0"):
        if record.startswith("# branch.head "):
            name = record[len("# branch.head ") :]
            return None if name == "(detached)" else name
    return None


def _missing_identity(root: str) -> str | None:
    """user.name or user.email when neither the environment nor git's config gives it (one git call at most)."""
    wanted = [
        key
        for key, env in (("user.name", "GIT_AUTHOR_NAME"), ("user.email", "GIT_AUTHOR_EMAIL"))
        if not os.environ.get(env, "").strip()
    ]
    if not wanted:
        return None
    done = run(root, "config", "--get-regexp", r"^user\.(name|email)$")
    found = {}
    for line in done.stdout.decode(errors="replace").splitlines():  # the last of several values wins, as for --get
        key, _, value = line.partition(" ")
        found[key.lower()] = value.strip()
    return next((key for key in wanted if not found.get(key)), None)


def _count(items: list[str], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _names(paths: list[str]) -> str:
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return ", ".join(paths[:_SHOWN]) + more


def _is_under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in prefixes)


def is_ancestor(root: str, old: str, new: str) -> bool:
    """Whether commit `new` contains `old` in its history (HEAD moved on from it, not past it by a rewrite)."""
    done = run(root, "merge-base", "--is-ancestor", old, new)
    if done.returncode not in {0, 1}:
        raise OSError(f"git merge-base failed: {reason(done)}")
    return done.returncode == 0


def current_branch(root: str) -> str | None:
    """The branch checked out in `root` (short), read from .git/HEAD; git is asked when HEAD does not name a
    branch there (detached, or refs kept in a reftable)."""
    found = layout(root)
    if found is not None and not os.path.isdir(os.path.join(found.common_dir, "reftable")):
        ref = gitcache.head_ref(found)
        if ref is not None:
            return ref.removeprefix("refs/heads/")
    done = run(root, "symbolic-ref", "-q", "--short", "HEAD")
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def valid_branch_name(root: str, name: str) -> bool:
    if gitcache.plain_branch(name):
        return True
    return run(root, "check-ref-format", "--branch", name).returncode == 0 and not name.startswith("-")


def switch_branch(root: str, name: str) -> str:
    """Work on branch `name`: switch to it, or create it from HEAD. Never with --force: git refuses
    to switch when that would overwrite uncommitted work, and then nothing has changed.

    Returns what was done, for the user; raises OSError with git's reason when it cannot be done."""
    if current_branch(root) == name:
        return f"on branch {name}"
    exists = run(root, "rev-parse", "--verify", "-q", f"refs/heads/{name}").returncode == 0
    done = run(root, "switch", name) if exists else run(root, "switch", "-c", name)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
        reason = "; ".join(lines[:3]) or f"exit {done.returncode}"
        raise OSError(f"cannot switch to branch {name}: {reason}")
    return f"switched to branch {name}" if exists else f"created branch {name}"


# The hooks `git commit` may run, each of which may change the files after ralph read them.
COMMIT_HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-index-change",
)


# After each commit `git commit` starts `git maintenance run --auto`, which nearly always finds nothing to do (gc.auto
# waits for thousands of loose objects) and costs a process, 1.5-2 ms. ralph's commits let it run on the first and
# every MAINTAIN_EVERY-th after: the repository is kept as git would keep it, for a process fewer per iteration.
MAINTAIN_EVERY = 25
_COMMITS = itertools.count()


def _maintenance() -> tuple[str, ...]:
    return () if next(_COMMITS) % MAINTAIN_EVERY == 0 else ("-c", "maintenance.auto=false")


def commit_paths(
    top: str,
    names: Sequence[str],
    message: str,
    read_head: Callable[[], tuple[bool, str | None]] | None = None,
    *,
    hooks: bool = True,
    tracked: bool = False,
) -> str | None:
    """Stage exactly `names` (paths from the repository's top `top`: changed, new or deleted) and commit
    them with the user's identity and hooks; the user's other uncommitted work stays as it was.

    Returns the new commit, or None when there was nothing to commit. Raises OSError when git refuses
    (a failing pre-commit hook, say); the paths are unstaged again then. `read_head`: the new HEAD read
    without a git process, as (known, commit) (gitcache.read_head); git is asked when it is not known.
    `hooks=False`, known to run no hook of the user's and no merge waiting: `git commit` itself finds out
    whether there is anything to commit (a process fewer when there is); with `tracked` too (every path is in the
    staging area already), it stages them as it commits (`--include`: one process, one read of a big index)."""
    if not names:
        return None
    listed = _nul_list(names)
    # literal pathspecs from stdin: no glob, no magic, no argv length limit
    literal = ("--pathspec-from-file=-", "--pathspec-file-nul")
    if tracked and not hooks:
        args = (*_maintenance(), "-c", "core.literalPathspecs=true", "commit", "-q", "-i", "-m", message, *literal)
        done = run(top, *args, stdin=listed)
        if done.returncode == 0:
            return _new_head(top, read_head)
        if done.returncode == 1 and any(words in done.stdout for words in _NOTHING_TO_COMMIT):
            return None
        # any other refusal leaves the index as it was: staged and committed the usual way below, which says why
    gone = [name for name in names if not os.path.lexists(os.path.join(top, name))]
    present = [name for name in names if name not in set(gone)]
    # A deleted file is staged by `rm --cached`, which lets one the index no longer holds (the agent's own
    # reset, say) pass; `git add` refuses a path that matches nothing.
    for args, paths in ((("rm", "--cached", "-q", "--ignore-unmatch"), gone), (("add", "-A"), present)):
        staged = (
            run(top, "-c", "core.literalPathspecs=true", *args, *literal, stdin=_nul_list(paths)) if paths else None
        )
        if staged is not None and staged.returncode != 0:
            raise OSError(f"git {args[0]} failed: {reason(staged)}")
    # A hook must not run for nothing: with hooks, ask first whether anything is staged.
    if hooks and _nothing_staged(top):
        return None
    done = run(top, *_maintenance(), "commit", "-q", "-m", message, hooks=hooks)
    if done.returncode != 0:
        if not hooks and _nothing_staged(top):
            return None
        if run(top, "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
            run(top, "-c", "core.literalPathspecs=true", "reset", "-q", *literal, stdin=listed)
        raise OSError(f"git commit failed: {reason(done)}")
    return _new_head(top, read_head)


def _new_head(top: str, read_head: Callable[[], tuple[bool, str | None]] | None) -> str | None:
    known, made = read_head() if read_head is not None else (False, None)
    if known and made:
        return made
    head = run(top, "rev-parse", "HEAD")
    return head.stdout.decode().strip() or None


# What `git commit` says (LC_ALL=C) when it made no commit for want of changes; any other failure is told.
_NOTHING_TO_COMMIT = (b"nothing to commit", b"nothing added to commit", b"no changes added to commit")


def _nothing_staged(top: str) -> bool:
    return run(top, "diff", "--cached", "--quiet").returncode == 0


def _nul_list(paths: Sequence[str]) -> bytes:
    return "".join(f"{path}\0" for path in paths).encode("utf-8", "surrogateescape")


def reason(done: subprocess.CompletedProcess[bytes]) -> str:
    """Why a git command failed, in one line: its first `fatal:` or `error:` line (git's advice, such as "remove
    the file manually to continue", comes after it), else its last line."""
    lines = [line.strip() for line in (done.stderr or done.stdout).decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    said = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "")
    return said or f"exit {done.returncode}"
