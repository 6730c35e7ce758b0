"""One loop per worktree: two loops in one set of files undo and commit each other's work.

The lock lives in the worktree's own git folder (each linked worktree has its own), or in the project's
`.ralph/` outside git. Its holder writes its PID and its feature folder, so a refused run can say who
holds the worktree and how to run side by side instead.
"""

from __future__ import annotations

import os
import shlex

from ralphloop.files.read import read_lock_note
from ralphloop.files.store import RunLock
from ralphloop.project.paths import RALPH_DIR, FeaturePaths, display_path, feature_flag
from ralphloop.workspace import git


class WorktreeLock(RunLock):
    """The run's claim on its worktree (taken before the feature's own lock)."""

    def __init__(self, paths: FeaturePaths, flags: tuple[str, ...] = ()) -> None:
        where = git.git_dir(paths.project_root)
        folder = os.path.join(where, "ralph") if where else os.path.join(paths.project_root, RALPH_DIR)
        os.makedirs(folder, exist_ok=True)
        super().__init__(os.path.join(folder, "worktree.lock"), f"ralph run for {paths.name}", note=paths.dir)
        self.paths = paths
        self.flags = flags  # the run's other flags, repeated in the command that runs it beside the other
        self.in_git = where is not None

    def refusal(self, holder: int | None) -> str:
        who = f"PID {holder}" if holder else "another ralph"
        held = read_lock_note(self.path).partition("\n")[2].strip()
        if held == self.paths.dir or not held:
            return f"{self.what} is already running in this worktree ({who})"
        root = self.paths.project_root
        return (
            f"another loop runs in this worktree ({who}, feature {display_path(held, root)}); one loop per "
            f"worktree, so that neither undoes nor commits the other's work. {self._side_by_side()}"
        )

    def _side_by_side(self) -> str:
        """How to run this feature beside the other: its own worktree (parallel mode comes later)."""
        if not self.in_git:
            return "To run both at once, give this feature a copy of the project of its own."
        top = git.toplevel(self.paths.project_root) or self.paths.project_root
        sibling = os.path.join(os.path.dirname(top), f"{os.path.basename(top)}-{self.paths.name}")
        here = os.path.normpath(os.path.join(sibling, os.path.relpath(self.paths.project_root, top)))
        command = shlex.join(["git", "worktree", "add", sibling]) + " && " + shlex.join(["cd", here])
        # from `here`, the sibling's project root: the folder as seen from the root (a root workspace is `.`)
        feature = self.paths.name if self.paths.is_feature_folder else self.paths.display()
        command += f" && ralph run {feature_flag(feature)}" + "".join(f" {shlex.quote(flag)}" for flag in self.flags)
        tracked = git.run(top, "ls-files", "--error-unmatch", "--", self.paths.dir).returncode == 0
        first = "" if tracked else f"commit {display_path(self.paths.dir, top)} (a new worktree starts at HEAD), then "
        return f"To run both at once, {first}run: {command}"
