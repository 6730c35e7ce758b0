"""The project's files as the loop sees them: captures as git objects, what an iteration changed, the undo
of a failed attempt (saved first) and the commit of accepted work. Effects at the edge; git.py does git.
"""

from __future__ import annotations

import os

from ralphloop import captures, git
from ralphloop.events import Committed, Notice
from ralphloop.paths import FeaturePaths, display_path
from ralphloop.protocols import Task
from ralphloop.state.store import atomic_write_bytes
from ralphloop.tasks.formats import FORMATS
from ralphloop.textsafe import one_line


class Workspace:
    """One feature's view of its repository. `None` from `open` outside a git repository."""

    def __init__(self, paths: FeaturePaths, top: str, index_file: str) -> None:
        self.paths = paths
        self.top = top
        self.index_file = index_file
        self.progress_rel = os.path.relpath(paths.progress, top)

    @classmethod
    def open(cls, paths: FeaturePaths) -> Workspace | None:
        top = git.toplevel(paths.project_root)
        index = captures.scratch_index(paths.project_root, paths.name) if top else None
        return cls(paths, top, index) if top and index else None

    def capture(self) -> captures.WorkTree | None:
        """The whole workspace now (a walk of every file: the costly capture)."""
        return captures.capture(self.paths.project_root, self.index_file)

    def after_records(self, base: captures.WorkTree | None) -> captures.WorkTree | None:
        """`base` (the files as an iteration left them) with ralph's own appends since read again: the
        next iteration's start without walking every file. Valid only when nothing else ran meanwhile."""
        found = captures.recapture(self.top, self.index_file, base, [self.progress_rel]) if base else None
        return found or self.capture()

    def changed(self, start: captures.WorkTree | None, end: captures.WorkTree | None) -> tuple[str, ...]:
        """Paths changed between two captures, ralph's runtime files left out."""
        if start is None or end is None:
            return ()
        names = captures.changed_between(self.paths.project_root, start, end)
        return tuple(name for name in names if not self.paths.is_runtime(os.path.join(self.top, name)))

    def work_changed(self, names: tuple[str, ...]) -> bool:
        """Whether `names` hold more than the progress log (which alone is not work)."""
        return any(name != self.progress_rel for name in names)

    def attempt_ref(self, number: int) -> str:
        """Where iteration `number`'s failed attempt is saved."""
        feature = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in self.paths.name)
        return f"refs/ralph/attempts/{feature}/iteration-{number}"

    def undo(
        self,
        start: captures.WorkTree | None,
        end: captures.WorkTree | None,
        number: int,
        task_id: str,
        *,
        finishing: bool = False,
    ) -> str:
        """Save a failed attempt (a git ref and a patch), then put the workspace back as it was at its start;
        progress.txt keeps what was appended meanwhile (it is append-only). Returns the note to record.
        `finishing`: an undo a kill cut short, finished by the next run: the attempt it saved is kept as it is
        (what is left in the files may be only part of it). Otherwise an older attempt of the same number (the
        numbering started again) is never replaced: this one is saved beside it."""
        if start is None or end is None:
            return "the workspace could not be captured: the failed attempt's changes stay in place"
        if start.tree == end.tree and start.head == end.head:
            return "the failed attempt changed no file; nothing to undo"
        ref = self.attempt_ref(number)
        patch = os.path.join(self.paths.logs, f"iteration-{number}.patch")
        progress = _read_bytes(self.paths.progress)
        root = self.paths.project_root
        try:
            saved = captures.saved_attempt(root, ref, patch)
            if saved is None or not finishing:
                for again in range(2, 1000):
                    if saved is None:
                        break
                    ref = f"{self.attempt_ref(number)}-{again}"
                    saved = captures.saved_attempt(root, ref, patch)
                message = f"ralph: failed attempt at {task_id} (iteration {number})"
                saved = captures.save_attempt(root, start, end, ref, message, patch)
            captures.restore(root, start, self.index_file)
        except OSError as exc:
            return f"could not undo the failed attempt ({exc}); the retry starts on top of its changes"
        if progress is not None and _read_bytes(self.paths.progress) != progress:
            atomic_write_bytes(self.paths.progress, progress)  # the log is append-only: keep what was written
        where = f"{saved.ref} (commit {saved.commit[:12]})" + (
            f" and {display_path(saved.patch, root)}" if saved.patch else ""
        )
        return (
            f"failed attempt saved as {where}, then undone: the workspace is back as it was before iteration {number}"
        )

    def put_back(self, start: captures.WorkTree | None, path: str) -> str | None:
        """The file at `path` as `start` holds it (the task file after an agent call that did not count: its
        work stays, its marks do not); a note to record, or None when there was nothing to put back."""
        rel = os.path.relpath(path, self.top)
        held = captures.blob(self.top, start.tree, rel) if start is not None and os.path.isfile(path) else None
        if held is None or held == _read_bytes(path):
            return None
        atomic_write_bytes(path, held)
        return f"{rel} put back as it was before this iteration: a call that did not count marks no task done"

    def commit_task(self, start: captures.WorkTree | None, task: Task, kind: str, number: int) -> list[object]:
        """Commit an accepted iteration's work under its task's name (the format says how it is written):
        the events that tell it (Committed, or a warning when git refused; none when nothing changed)."""
        message = task.title if FORMATS[kind].title_commits else f"{task.id}: {task.title}"
        try:
            made = self.commit(start, message)
        except OSError as exc:
            return [Notice("warning", f"auto-commit failed, the changes stay uncommitted: {exc}")]
        return [Committed(number, made, one_line(message, 72))] if made else []

    def commit(self, start: captures.WorkTree | None, message: str) -> str | None:
        """Commit what changed since `start` (the agent's work and ralph's record of it); never ralph's runtime
        files, never the user's other uncommitted work, nor the files of an earlier iteration whose work was not
        accepted (a refused claim, a usage limit) unless this one changed them too. Returns the commit; raises
        OSError when git refuses (a failing pre-commit hook, say)."""
        now = captures.capture(self.paths.project_root, self.index_file)
        names = sorted(self.changed(start, now))
        made = git.commit_paths(self.top, names, one_line(message, 200))
        return made[:12] if made else None


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None
