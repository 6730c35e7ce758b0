"""The project's files as the loop sees them: captures as git objects, what an iteration changed, the undo
of a failed attempt (saved first), the commit of accepted work, and the lock files a killed git left behind.
Effects at the edge; workspace/git.py, workspace/captures.py and workspace/undo.py do git.

A git failure is never read as "nothing changed" (docs/guards.md, "When git fails"): before an agent starts
it raises GitFailed (the loop stops); once the agent has run it is kept as `failure`, the iteration is
recorded with it, then the loop stops. Before each of ralph's git steps, stale lock files are removed and said.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

from ralphloop.core.errors import RalphError
from ralphloop.core.events import Committed
from ralphloop.core.protocols import Task
from ralphloop.files.store import atomic_write_bytes
from ralphloop.plugins.formats import format_of
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.words.textsafe import one_line
from ralphloop.workspace import captures, git, gitcache, gitlocks, objects, undo


class GitFailed(RalphError):
    """git could not do a step the loop relies on: the loop stops with this reason."""


class Workspace:
    """One feature's view of its repository. `None` from `open` outside a git repository."""

    def __init__(
        self, paths: FeaturePaths, layout: gitcache.Layout, index_file: str, task_file: str, warn: Callable[[str], None]
    ) -> None:
        self.paths = paths
        self.layout = layout
        self.top = layout.top
        self.index_file = index_file
        self.task_file = task_file
        self.warn = warn  # says a stale lock was removed
        self.progress_rel = os.path.relpath(paths.progress, self.top)
        self.failure: str | None = None  # what git failed at after an agent ran: the loop stops once it is recorded
        # paths (from the top) never committed: a --parallel loop's task file and progress, which its coordinator
        # commits once the story is merged (docs/parallel.md)
        self.kept_out: frozenset[str] = frozenset()
        self.committed: captures.WorkTree | None = None  # the workspace the last auto-commit was made from
        self._hooks: bool | None = None  # whether git runs a hook of the user's at a commit (asked once)
        self.restored: captures.WorkTree | None = None  # the workspace the last undo left (its checking capture)

    @classmethod
    def open(
        cls, paths: FeaturePaths, task_file: str = "", warn: Callable[[str], None] = lambda _text: None
    ) -> Workspace | None:
        index = captures.scratch_index(paths.project_root, paths.name)  # None outside a repository
        memo = gitcache.memo(index) if index else None
        return cls(paths, memo.layout, index, task_file, warn) if index and memo else None

    def clear_locks(self, branch: str | None = None) -> str:
        """Remove the lock files that git commands killed half-way left (each removal said through `warn`);
        returns, in words, those left because a git process may hold them ("" when none)."""
        layout = self.layout
        # the private index and its undo copy: only ralph's own git, naming them in GIT_INDEX_FILE, makes their locks
        private = {index + ".lock": index for index in (self.index_file, self.index_file + ".undo")}
        files = [os.path.join(layout.git_dir, name) for name in ("index.lock", "HEAD.lock")]
        files += [*private, layout.user_index + ".lock"]
        files += [os.path.join(layout.common_dir, ref + ".lock") for ref in {branch, gitcache.head_ref(layout)} if ref]
        files.append(os.path.join(layout.common_dir, "packed-refs.lock"))
        found = gitlocks.clear_stale(sorted(set(files)), (self.top, layout.git_dir, layout.common_dir), private)
        for lock in found.removed:
            gone = "uses ralph's private index" if lock in private else "runs in this repository"
            self.warn(
                f"removed the stale git lock {self._shown(lock)}: a git command was killed while it held it "
                f"(no git process {gone})"
            )
        if not found.held:
            return ""
        holder = f"git (pid {found.holder})" if found.holder else "a git command that has just started"
        return (
            f"{', '.join(self._shown(lock) for lock in found.held)} may be held by {holder}, running in this repository"
        )

    def capture(self) -> captures.WorkTree:
        """The whole workspace now (a walk of every file: the costly capture); GitFailed when git cannot."""
        held = self.clear_locks()
        try:
            return captures.capture(self.paths.project_root, self.index_file)
        except OSError as exc:
            raise GitFailed(f"git could not capture the workspace: {_with(exc, held)}") from None

    def capture_end(self) -> captures.WorkTree | None:
        """The workspace as the agent left it; None when git cannot capture it (the reason kept as `failure`)."""
        try:
            return self.capture()
        except GitFailed as exc:
            self.failure = f"{exc}: what this iteration changed is unknown"
            return None

    def after_records(self, base: captures.WorkTree | None) -> captures.WorkTree | None:
        """`base` (the files as an iteration left them) with ralph's own appends since read again: the
        next iteration's start without walking every file. Valid only when nothing else ran meanwhile."""
        return self._read_again(base, [self.progress_rel])

    def after_undo(self) -> captures.WorkTree | None:
        """The workspace the last undo left, progress.txt (put back, appended to) read again; None: it did not end."""
        return self._read_again(self.restored, [self.progress_rel])

    def after_commit(self) -> captures.WorkTree | None:
        """The workspace an auto-commit left: the files it was made from (ralph's commit changes none of them)
        with HEAD and the staging area read again; None when there was no commit to start from."""
        base, self.committed = self.committed, None
        return self._read_again(base, [])

    def _read_again(self, base: captures.WorkTree | None, paths: list[str]) -> captures.WorkTree | None:
        """`base` with `paths` (and HEAD, the staging area) read again; a whole capture when git cannot."""
        if base is None or self.failure:
            return None
        try:
            return captures.recapture(self.top, self.index_file, base, paths)
        except OSError:
            return self.capture()

    def changed(self, start: captures.WorkTree | None, end: captures.WorkTree | None) -> tuple[str, ...]:
        """Paths changed between two captures, ralph's runtime files left out."""
        if start is None or end is None:
            return ()
        try:
            names = captures.changed_between(self.paths.project_root, start, end, self.layout)
        except OSError as exc:
            self.failure = f"git could not compare the workspace with its start: {exc}"
            return ()
        return tuple(name for name in names if not self.paths.is_runtime(os.path.join(self.top, name)))

    def work_changed(self, names: tuple[str, ...]) -> bool:
        """Whether `names` hold more than the progress log (which alone is not work)."""
        return any(name != self.progress_rel for name in names)

    def attempt_ref(self, number: int) -> str:
        """Where iteration `number`'s failed attempt is saved."""
        return f"refs/ralph/attempts/{self._feature()}/iteration-{number}"

    def undo(
        self,
        start: captures.WorkTree | None,
        end: captures.WorkTree | None,
        number: int,
        task_id: str,
        status: str = "failed",
        *,
        finishing: bool = False,
        fresh: bool = False,
    ) -> str:
        """Save a failed attempt, or a call that did not count (its `status` names it), as a git ref and a patch,
        then put the workspace back as it was at its start;
        progress.txt keeps what was appended meanwhile (it is append-only). Returns the note to record; when the
        workspace cannot be put back, the note is also the `failure` the loop stops on.
        `finishing`: an undo a kill cut short, finished by the next run: the attempt it saved is kept as it is
        (what is left in the files may be only part of it). Otherwise an older attempt of the same number (the
        numbering started again) is never replaced: this one is saved beside it. `fresh`: nothing ran since `end`."""
        kind = {"interrupted": "interrupted", "usage-limit": "usage-limited"}.get(status, "failed")
        self.restored = None
        if start is None or end is None:
            return f"the {kind} attempt's changes stay in place: {self.failure or 'git could not capture them'}"
        if _same(start, end):
            self.restored = end
            return f"the {kind} attempt changed no file; nothing to undo"
        attempt = f"the {kind} attempt at {task_id} (iteration {number})"
        ref = self.attempt_ref(number)
        patch = os.path.join(self.paths.logs, f"iteration-{number}.patch")
        progress = _read_bytes(self.paths.progress)
        root = self.paths.project_root
        held = self.clear_locks(start.branch)
        try:
            saved = undo.saved_attempt(root, ref, patch)
            if saved is None or not finishing:
                for again in range(2, 1000):
                    if saved is None:
                        break
                    ref = f"{self.attempt_ref(number)}-{again}"
                    saved = undo.saved_attempt(root, ref, patch)
                saved = undo.save_attempt(root, start, end, ref, f"ralph: {attempt}", patch)
        except OSError as exc:
            return self._failed(f"{attempt} could not be saved ({_with(exc, held)}), so it is not undone")
        where = f"{saved.ref} (commit {saved.commit[:12]})" + (
            f" and {display_path(saved.patch, root)}" if saved.patch else ""
        )
        if held:
            return self._failed(f"{attempt} is saved as {where} but not undone: {held}")
        try:  # `fresh`: nothing ran since `end` (ralph's breaker file aside), so the undo starts from it
            now = captures.recapture(self.top, self.index_file, end, []) if fresh else None
            self.restored = undo.restore(root, start, self.index_file, now)
        except OSError as exc:
            return self._failed(f"{attempt} is saved as {where}, but could not be undone: {exc}")
        restored = _read_bytes(self.paths.progress)
        if progress is not None and restored != progress and progress.startswith(restored or b""):
            # the log is append-only: what was appended meanwhile is kept; a log the agent's git took entries
            # from (a reset) stays as the undo put it back, whole
            atomic_write_bytes(self.paths.progress, progress)
        return (
            f"{kind} attempt saved as {where}, then undone: the workspace is back as it was before iteration {number}"
        )

    def position(self) -> captures.WorkTree | None:
        """HEAD, its branch and a git operation waiting, without the files (for `left_the_run`); None when
        git cannot tell (the full capture after it then fails and says why)."""
        try:
            return captures.position(self.paths.project_root, self.index_file)
        except OSError:
            return None

    def left_the_run(self, start: captures.WorkTree | None, end: captures.WorkTree | None) -> str | None:
        """Why the agent's work is not on the run's branch, ready to commit, or None. It switched branches (the
        rest of the run would land on its branch, and "complete" be said of a branch the user does not work on),
        left a merge or a rebase waiting (a commit would take its conflict markers), or rewrote the history the
        iteration began with (a reset, an amend, a rebase: earlier work gone, to be done twice). The attempt is
        then a failed one: saved, undone (the branch, the history and the files put back) and retried."""
        if start is None or end is None or self.failure:
            return None
        if end.operation and end.operation != start.operation:
            return f"the agent left a {end.operation} in progress: finish or abort it before ending"
        if start.branch and end.branch != start.branch:
            now = end.branch.removeprefix("refs/heads/") if end.branch else "a detached HEAD"
            return f"the agent left the run's branch {start.branch.removeprefix('refs/heads/')} for {now}: stay on it"
        if not start.head or end.head == start.head:
            return None
        try:
            if end.head and git.is_ancestor(self.top, start.head, end.head):
                return None  # the agent committed on top of it
        except OSError:
            return None  # git failing here fails the capture too, and that stops the loop
        return (
            f"the agent rewrote the branch's history: HEAD went from {start.head[:12]} to "
            f"{(end.head or 'nothing')[:12]}, which does not hold it (a reset, an amend or a rebase of earlier work)"
        )

    def after_agent(
        self, start: captures.WorkTree | None, end: captures.WorkTree | None, number: int, reopened: frozenset[str]
    ) -> tuple[str, ...]:
        """Notes on work kept as the agent left it: git failed to read it, or the agent threw work away with git
        (it rewrote the branch's history, or put the task file back to its committed version, un-marking `reopened`
        tasks). What the iteration began with is then kept under refs/ralph/rewound/<feature>/iteration-N."""
        if self.failure or start is None or end is None:
            return (self.failure,) if self.failure else ()
        try:
            rewritten = bool(start.head and end.head != start.head) and not (
                end.head and git.is_ancestor(self.top, start.head or "", end.head)
            )
            reverted = bool(reopened) and not rewritten and self._task_file_committed(end)
        except OSError:
            return ()  # a courtesy: the iteration's own facts are already captured
        if not rewritten and not reverted:
            return ()
        ref = f"refs/ralph/rewound/{self._feature()}/iteration-{number}"
        try:
            undo.keep(self.top, start, ref, f"ralph: the workspace before iteration {number}, which its agent rewound")
            kept = f"the workspace as the iteration began is kept as {ref}"
        except OSError as exc:
            kept = f"the workspace as the iteration began could not be kept ({exc})"
        said = []
        if rewritten:
            where = (start.branch or "HEAD").removeprefix("refs/heads/")
            said.append(
                f"the agent rewrote the history of {where}: HEAD went from {(start.head or '')[:12]} to "
                f"{(end.head or 'nothing')[:12]}, which does not hold it (a reset, an amend or a rebase)"
            )
        if reopened:
            rel = os.path.relpath(self.task_file, self.paths.project_root)
            said.append(
                f"{', '.join(sorted(reopened))} passed when this iteration began and no longer "
                f"{'does' if len(reopened) == 1 else 'do'}: {rel} was rewound with git"
            )
            kept += f" (git checkout {ref} -- {rel} puts its marks back)" if ref in kept else ""
        if self._progress_put_back(start):
            said.append(f"{os.path.relpath(self.paths.progress, self.paths.project_root)} was rewound too: put back")
        return ("; ".join([*said, kept]),)

    def commit_task(
        self,
        start: captures.WorkTree | None,
        task: Task,
        kind: str,
        number: int,
        end: captures.WorkTree | None = None,
    ) -> list[object]:
        """Commit an accepted iteration's work under its task's name (the format says how it is written): the
        Committed event that tells it, none when nothing changed. Raises GitFailed as `commit` does."""
        message = task.title if format_of(kind).title_commits else f"{task.id}: {task.title}"
        made = self.commit(start, message, number, end)
        return [Committed(number, made, one_line(message, 72))] if made else []

    def commit(
        self, start: captures.WorkTree | None, message: str, number: int, end: captures.WorkTree | None = None
    ) -> str | None:
        """Commit what changed since `start` (the agent's work and ralph's record of it); never ralph's runtime
        files, never the user's other uncommitted work, nor the files of an earlier iteration whose work was not
        accepted (a refused claim, a usage limit) unless this one changed them too. Returns the commit; raises
        GitFailed when git refuses (a failing pre-commit hook, say): nothing is left uncommitted unsaid.

        `end`: the iteration's own capture, when nothing but ralph's record ran since (no hook): only
        progress.txt is read again, where a capture walks every file (the 20,000 files of a big project)."""
        held = self.clear_locks()
        self.committed = None
        try:
            if end is None:
                now = captures.capture(self.paths.project_root, self.index_file)
            else:
                now = captures.recapture(self.top, self.index_file, end, [self.progress_rel])
            names = sorted(name for name in self.changed(start, now) if name not in self.kept_out)
            hooks = self._commit_hooks() or now.operation is not None
            store = objects.Store.of(self.layout.common_dir)
            tracked = objects.holds_all(store, now.index_tree, names)
            head = partial(gitcache.read_head, self.layout)
            made = git.commit_paths(self.top, names, one_line(message, 200), head, hooks=hooks, tracked=tracked)
            # `git commit --include` passes over an entry marked skip-worktree (or assume-unchanged): never unsaid
            if tracked and not hooks and (left := objects.left_out(store, made or head()[1], now.tree, names)):
                made_of = f"commit {made[:12]}" if made else "its commit"
                raise OSError(
                    f"git left {', '.join(left[:5])} out of {made_of} (marked skip-worktree or assume-unchanged?)"
                )
            # the next start is what the commit was made of, unless git ran a hook of the user's that may have
            # changed files (a formatter that stages again, a post-commit that writes one)
            self.committed = None if made and hooks else now
            if made and not hooks:
                self._staged_as(made)
        except OSError as exc:
            raise GitFailed(
                f"the auto-commit of iteration {number} failed, its changes stay uncommitted: {_with(exc, held)}; "
                "commit them yourself (or mend what refused them), then run again"
            ) from None
        return made[:12] if made else None

    def _staged_as(self, commit: str) -> None:
        """The staging area is the tree of the commit git just made of it (no hook ran since): no write-tree next."""
        store, memo = objects.Store.of(self.layout.common_dir), gitcache.memo(self.index_file)
        tree = objects.commit_tree(store, commit) if store is not None else None
        if tree is not None and memo is not None:
            memo.user_stamp, memo.user_tree = gitcache.stamp(self.layout.user_index), tree

    def _commit_hooks(self) -> bool:
        """Whether a `git commit` here runs a hook of the user's (core.hooksPath or .git/hooks), asked of git once."""
        if self._hooks is None:
            found = git.run(self.top, "rev-parse", "--git-path", "hooks", hooks=True)  # the user's hooks folder
            folder = os.path.join(self.top, found.stdout.decode(errors="replace").strip())
            self._hooks = found.returncode != 0 or any(
                os.access(os.path.join(folder, name), os.X_OK) for name in git.COMMIT_HOOKS
            )
        return self._hooks

    def _failed(self, what: str) -> str:
        self.failure = f"{what}: look at the workspace (git status) and put it as you want it, then run again"
        return self.failure

    def _task_file_committed(self, end: captures.WorkTree) -> bool:
        """Whether the task file, as the agent left it, is its version in HEAD (a reset, checkout or stash)."""
        rel = os.path.relpath(self.task_file, self.top)
        if not self.task_file or not end.head or not os.path.isfile(self.task_file):
            return False
        return captures.blob(self.top, end.tree, rel) == captures.blob(self.top, end.head, rel)

    def _progress_put_back(self, start: captures.WorkTree) -> bool:
        """progress.txt as `start` holds it, when the agent's git took entries away (it is append-only)."""
        held = captures.blob(self.top, start.tree, self.progress_rel)
        now = _read_bytes(self.paths.progress) or b""
        if held is None or len(now) >= len(held) or not held.startswith(now):
            return False
        atomic_write_bytes(self.paths.progress, held)
        return True

    def _feature(self) -> str:
        return "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in self.paths.name)

    def _shown(self, path: str) -> str:
        return display_path(path, self.paths.project_root)


def _same(start: captures.WorkTree, end: captures.WorkTree) -> bool:
    """Whether two captures hold the same workspace: files, HEAD and its branch, the staging area, git's state."""
    return (start.tree, start.head, start.branch, start.index_tree, start.operation) == (
        end.tree,
        end.head,
        end.branch,
        end.index_tree,
        end.operation,
    )


def _with(exc: OSError, held: str) -> str:
    return f"{exc} ({held})" if held else str(exc)


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None
