"""A worker's clones (issue 37): one clone of each repository under `--workdir`, fetched before each piece of work,
whose own tree is on a branch of its own at the feature branch's tip (so that the feature branch itself is never
checked out, and the merge queue may move it). The loops work in its worktrees, as on one machine; what they hand
back travels by git: a story's branch, its saved attempts, and the feature branch, pushed with a lease."""

from __future__ import annotations

import hashlib
import os
import re
import threading

from ralphloop.fleet.gitops import GitStep
from ralphloop.workspace import git

WORKER_BRANCH = "ralph-worker"  # what the clone's own tree has checked out
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class Clone:
    """The worker's clone of `remote` under `workdir`."""

    def __init__(self, workdir: str, remote: str, use: str = "loops") -> None:
        """`use`: the loops' clone, or the merges' (a clone of its own, so that a merge's gates never hold up a
        loop's start, which takes the clone's lock to build its worktree)."""
        self.remote = remote
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(remote.rstrip("/")).removesuffix(".git"))[:40]
        key = hashlib.sha256(remote.encode()).hexdigest()[:10]
        self.root = os.path.join(os.path.abspath(workdir), f"{name or 'repo'}-{key}", use)
        with _LOCKS_GUARD:
            self.lock = _LOCKS.setdefault(self.root, threading.Lock())  # its tree and refs: one step at a time

    def _git(self, *args: str, at: str | None = None) -> str:
        done = git.run(at or self.root, *args)
        if done.returncode != 0:
            raise GitStep(f"git {args[0]} failed in {self.root}: {git.reason(done)}")
        return done.stdout.decode("utf-8", "replace").strip()

    def sync(self, branch: str) -> str:
        """The clone made (once) and fetched, its tree detached at `branch`'s tip on the remote; that tip."""
        if not os.path.isdir(os.path.join(self.root, ".git")):
            os.makedirs(os.path.dirname(self.root), exist_ok=True)
            partial = f"{self.root}.partial"
            if os.path.isdir(partial):
                import shutil

                shutil.rmtree(partial)
            done = git.run(os.path.dirname(self.root), "clone", "-q", "--no-checkout", self.remote, partial)
            if done.returncode != 0:
                raise GitStep(f"git clone {self.remote} failed: {git.reason(done)}")
            os.rename(partial, self.root)  # a clone cut short by a kill is never taken for one
        tip = self.fetch(branch)
        if tip is None:
            raise GitStep(f"the branch {branch} is not on {self.remote}")
        # a branch of the worker's own, never the feature branch (which the merges move): a run needs a branch
        self._git("checkout", "-q", "-f", "-B", WORKER_BRANCH, tip)
        return tip

    def fetch(self, branch: str) -> str | None:
        """The local `branch` set to the remote's (None: the remote has no such branch, and neither has the clone)."""
        done = git.run(self.root, "fetch", "-q", "--no-tags", self.remote, f"+refs/heads/{branch}:refs/heads/{branch}")
        if done.returncode == 0:
            return self.head(branch)
        if b"couldn't find remote ref" not in done.stderr:
            raise GitStep(f"git fetch from {self.remote} failed: {git.reason(done)}")
        if self.head(branch) is not None:  # gone there (a merged story's branch): gone here too
            self._git("branch", "-D", branch)
        return None

    def has(self, ref: str) -> bool:
        """Whether the remote has `ref`."""
        return bool(self.remote_refs(ref))

    def remote_refs(self, pattern: str) -> list[str]:
        """The remote's refs named `pattern`, or under it when it ends in "/"."""
        listed = self._git("ls-remote", self.remote, pattern + ("*" if pattern.endswith("/") else ""))
        return [line.split("\t", 1)[1] for line in listed.splitlines() if "\t" in line]

    def head(self, branch: str) -> str | None:
        done = git.run(self.root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}")
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def push(self, local: str, remote_ref: str, *, lease: str | None = None, force: bool = False) -> bool:
        """`local` (a commit or ref) pushed to `remote_ref`; with `lease`, only while the remote has it there
        (False when the remote moved: never an overwrite)."""
        args = ["push", "--porcelain", "-q"]
        if lease is not None:  # "": only while the remote has no such ref
            args.append(f"--force-with-lease={remote_ref}:{lease}")
        elif force:
            args.append("--force")
        done = git.run(self.root, *args, self.remote, f"{local}:{remote_ref}")
        if done.returncode == 0:
            return True
        said = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
        if "[rejected]" in said or "stale info" in said or "fetch first" in said or "non-fast-forward" in said:
            return False
        raise GitStep(f"git push to {self.remote} failed: {git.reason(done)}")

    def push_refs(self, pattern: str) -> None:
        """Every local ref matching `pattern` (a story's saved attempts) pushed as it is; none overwritten there: a
        ref of the same name holding something else is a GitStep (fetch_refs first, so that keep() names it anew)."""
        listed = self._git("for-each-ref", "--format=%(refname)", pattern)
        for ref in listed.split():
            if not self.push(ref, ref):
                raise GitStep(f"{ref} on {self.remote} holds another commit: nothing was overwritten")

    def fetch_refs(self, pattern: str) -> None:
        """The remote's refs matching `pattern` (one `*`), here under the same names: the attempts other workers
        saved, so that a new one is never given a name the remote has."""
        done = git.run(self.root, "fetch", "-q", "--no-tags", self.remote, f"+{pattern}:{pattern}")
        if done.returncode != 0 and b"couldn't find remote ref" not in done.stderr:
            raise GitStep(f"git fetch from {self.remote} failed: {git.reason(done)}")
