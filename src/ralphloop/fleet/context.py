"""What every part of a parallel run shares: where the feature and its task file are, the branch the merge
queue moves, the loops running and queued, and the coordinator's records (fleet/book.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.file_task import FileTask
from ralphloop.fleet import gitops
from ralphloop.fleet.book import Book
from ralphloop.fleet.launcher import Launcher, LoopHandle, LoopSpec
from ralphloop.plugins.formats import Format
from ralphloop.project.paths import RUNTIME_NAMES, FeaturePaths
from ralphloop.state.fleet import LOOPS_DIR, loop_folder_name

if TYPE_CHECKING:
    from datetime import datetime

    from ralphloop.core.limits import UsageLimit
    from ralphloop.core.protocols import Agent
    from ralphloop.core.runner import ProcessLimits, Runner
    from ralphloop.fleet.budget import Spending
    from ralphloop.guards.budget import Budget
    from ralphloop.state.start_at import StartAt

FLEET_ENV = "RALPH_FLEET_RUN"  # the coordinator's run id, in the environment of everything it starts
PORTS_PER_LOOP = 100  # each slot's own ports, RALPH_PORT_BASE on: two loops' test servers never collide
PORT_BASE = 20000

# The quality gates over a loop's worktree: the names of those that fail (none configured: none fail).
Gates = Callable[[FeaturePaths, str], tuple[str, ...]]


@dataclass
class Fleet:
    root: str  # the user's worktree, where the feature was found
    paths: FeaturePaths  # the feature there: fleet.json, loops/, the records of the whole run
    task_format: Format  # how its task file lists and marks the stories (a format that can run in parallel)
    task_rel: str  # the task file, from the repository's top (the same in every worktree)
    progress_rel: str
    feature_rel: str
    sub: str  # the project's folder from the repository's top ("." when the project is the whole repository)
    target: str  # the branch the queue moves
    landing_tree: str | None  # the user's worktree that has `target` checked out (a fast-forward they asked for)
    parallel: int
    max_attempts: int
    child_words: tuple[str, ...]  # `ralph run` flags every loop gets (the user's own, less the coordinator's)
    book: Book
    launcher: Launcher
    clock: Clock
    cancel: CancelToken
    gates: Gates
    say: Callable[[str], None]
    grace_s: float = 10.0
    handles: dict[str, LoopHandle] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # story → why (kept for inspection)
    held_back: set[str] = field(default_factory=set)  # stories whose loop the user stopped: not started again
    attempts: dict[str, int] = field(default_factory=dict)
    collected: set[str] = field(default_factory=set)  # done stories whose marks are taken off (merge.collect)
    slots: dict[int, str] = field(default_factory=dict)  # slot → the loop in it: one dict for the run's fleets
    several: bool = False  # the run has other features' fleets: its lines name the feature
    bring_in: str | None = None  # the command that brings an integration branch into the feature branch
    feature_branch: str = ""  # the branch the work is for (the target, unless the queue lands on integration)
    home: str = ""  # the worktree that has the feature branch checked out, where bring_in is run
    resolver: Agent | None = None  # merge.resolve: agent: the run's agent, which resolves a conflict once (resolve.py)
    runner: Runner | None = None  # how the resolver starts: the run's runner (None: a local process)
    limits: ProcessLimits | None = None  # the run's process limits (the resolver's timeout)
    budget: Budget | None = None  # the feature's budget, as its settings give it
    spending: Spending | None = None  # the run's budget across its loops (None: no budget)
    # issue 34: why no loop may start now (every agent account past the user's cap on a usage window: the run's
    # failover chain's `held`), and whether the usage-limit policy then stops the run (exit) rather than waits
    held: Callable[[datetime], UsageLimit | None] | None = None
    stop_when_held: bool = False
    start_at: StartAt | None = None  # --start-at: no loop starts before it (the coordinator waits, not each loop)
    # issue 37: the target's remote copy moved first (a Temporal worker's push with a lease), before the local
    # branch; False when the remote moved meanwhile (the merge is then "moved": rebased again, never forced)
    publish: Callable[[str, str], bool] | None = None
    _stories: tuple[int, list[FileTask]] | None = None  # the stories as read at a version of the target
    _version: int = 0

    # ------------------------------------------------------------------ where things are

    def label(self, story: str) -> str:
        return f"{self.paths.name}/{story}" if self.several else story

    def worktree(self, story: str) -> str:
        return gitops.worktree_dir(self.root, self.paths.name, story)

    def branch(self, story: str) -> str:
        return gitops.loop_branch(self.paths.name, story)

    def loop_root(self, story: str) -> str:
        """The project's folder in the loop's worktree (the project may be a folder of its repository)."""
        return os.path.normpath(os.path.join(self.worktree(story), self.sub))

    def loop_paths(self, story: str) -> FeaturePaths:
        return FeaturePaths(self.loop_root(story), os.path.join(self.worktree(story), self.feature_rel))

    def loop_spec(self, story: str, slot: int, limits: tuple[str, ...] | list[str]) -> LoopSpec:
        """The child loop of `story` in its worktree, in `slot`, with `limits` (what is left of the run's budget)."""
        kept = self.kept(story)
        os.makedirs(kept, exist_ok=True)
        base = PORT_BASE + PORTS_PER_LOOP * slot
        return LoopSpec(
            story=story,
            worktree=self.loop_root(story),
            argv=("run", *self.child_words, *limits, f"--story={story}"),  # an id may start with "-"
            env={"RALPH_SLOT": str(slot), "RALPH_PORT_BASE": str(base), "RALPH_PORT_COUNT": str(PORTS_PER_LOOP)},
            slot=slot,
            log=os.path.join(kept, "terminal.log"),
        )

    def kept(self, story: str) -> str:
        """Where a loop's records go when its worktree is removed."""
        return os.path.join(self.paths.state_dir, LOOPS_DIR, loop_folder_name(story))

    def bring_in_now(self) -> str | None:
        """The command that brings the integration branch's work into the feature branch, as the branches stand:
        --ff-only while the feature branch has nothing of its own since; None when there is nothing to bring."""
        if self.target == self.feature_branch:
            return None
        mine = gitops.head_of(self.root, f"refs/heads/{self.feature_branch}")
        tip = gitops.head_of(self.root, f"refs/heads/{self.target}")
        if tip is None or mine is None or gitops.contains(self.root, tip, mine):
            return None
        fast = gitops.contains(self.root, mine, tip)
        return f"git merge {'--ff-only ' if fast else ''}{self.target}"

    # ------------------------------------------------------------------ the task file on the target branch

    def stories(self) -> list[FileTask]:
        """The stories as the target branch has them (the coordinator's pass marks are committed there). Read
        once per tip: only the coordinator moves the target while it runs (`moved` forgets it)."""
        version, cached = self._version, self._stories
        if cached is not None and cached[0] == version:
            return cached[1]
        found = self._read(gitops.blob(self.root, f"refs/heads/{self.target}", self.task_rel))
        if self._version == version:  # not moved meanwhile by the merge queue's thread
            self._stories = (version, found)
        return found

    def moved(self) -> None:
        """The target moved: read the stories afresh (called before the merged story leaves the queue)."""
        self._version += 1
        self._stories = None

    def passing(self) -> set[str]:
        return {story.id for story in self.stories() if story.done}

    def passes_in_worktree(self, story: str) -> bool:
        """Whether the loop's own copy of the task file marks its story passing (its agent's claim, verified by
        the child loop before it ended 0)."""
        try:
            with open(os.path.join(self.worktree(story), self.task_rel), "rb") as handle:
                raw = handle.read(16 << 20)
        except OSError:
            return False
        return self._passes(raw, story)

    def passes_at(self, tree: str, ref: str, story: str) -> bool:
        return self._passes(gitops.blob(tree, ref, self.task_rel), story)

    def marked(self, raw: bytes, story: str) -> bytes:
        """The task file's bytes with `story` marked done, as its format marks it."""
        mark: Callable[[bytes, str], bytes] = self.task_format.part(self.task_format.mark)
        return mark(raw, story)

    def _passes(self, raw: bytes | None, story: str) -> bool:
        return any(item.id == story and item.done for item in self._read(raw))

    def _read(self, raw: bytes | None) -> list[FileTask]:
        """The stories as a run reads them; [] when it cannot (a missing or invalid file)."""
        read: Callable[[bytes, str], list[FileTask]] = self.task_format.part(self.task_format.tasks_in)
        try:
            return read(raw or b"", self.task_rel)
        except RalphError:
            return []

    # ------------------------------------------------------------------ records

    def keep_records(self, story: str) -> None:
        """The loop's runtime files (logs, status, metrics...) moved to `loops/<story>/` of the feature, before
        its worktree goes: nothing of what it did is lost. Run again after a kill, it moves what is left."""
        source = self.loop_paths(story).state_dir
        dest = self.kept(story)
        os.makedirs(dest, exist_ok=True)
        for name in RUNTIME_NAMES:
            _move(os.path.join(source, name), os.path.join(dest, name))


def _move(source: str, dest: str) -> None:
    if not os.path.lexists(source):
        return
    if os.path.isdir(source) and not os.path.islink(source) and os.path.isdir(dest):
        for name in os.listdir(source):
            _move(os.path.join(source, name), os.path.join(dest, name))
        return
    if not os.path.isdir(dest):
        shutil.move(source, dest)  # a rename, unless the worktrees live on another filesystem
