"""What a worker does for a feature's workflow (issue 37): read the feature on the remote, run one story's loop, merge
one finished story. Each is the local run's own code over the worker's clone (temporal/clones.py): the fleet is
built by start/fleet.py as `ralph run --parallel` builds it, a loop is the same child `ralph run -s STORY` in its
own worktree (and its own sandbox), and a merge is fleet/merge.py's, whose landing on the remote is a push with a
lease. A loop's commits are pushed as it makes them, so that the story goes on from there on another worker when
this one dies (Temporal retries the activity once its heartbeats stop)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError, CancelledError

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object
from ralphloop.files.store import atomic_write_bytes
from ralphloop.fleet import gitops
from ralphloop.fleet import merge as merging
from ralphloop.fleet.context import Fleet
from ralphloop.fleet.gitops import GitStep
from ralphloop.fleet.launcher import LocalProcessLauncher, LoopHandle
from ralphloop.start.fleet import FleetRequest, build_fleet
from ralphloop.temporal.clones import Clone
from ralphloop.temporal.inbox import Inbox
from ralphloop.temporal.shapes import (
    FeatureSpec,
    LoopResult,
    LoopTask,
    MergeResult,
    MergeTask,
    Prepared,
    StoryRow,
)
from ralphloop.temporal.story import StoryBranch, Taken

if TYPE_CHECKING:
    from temporalio.client import Client

T = TypeVar("T")
PENDING_CAP = 256 << 10  # a story's progress entries carried to its merge (a workflow's payloads stay small)
MOVED_TRIES = 20  # a merge rebased again this often while other merges land first, then handed back


def _told(step: Callable[..., T]) -> Callable[..., T]:
    """A refusal of ralph's (a bad config, a branch gone) fails the activity in one line, not tried again: the
    workflow says it. A git step that failed (a push while the remote was away) is tried again by Temporal."""

    @functools.wraps(step)
    def run(*args: Any) -> T:
        try:
            return step(*args)
        except GitStep as error:
            raise ApplicationError(str(error), type="GitStep") from None
        except RalphError as error:
            raise ApplicationError(str(error), type="RalphError", non_retryable=True) from None

    return run


class Work:
    """The activities of one worker, over its clones under `workdir`."""

    def __init__(self, workdir: str, slots: int = 0, name: str | None = None) -> None:
        self.workdir = workdir
        self.name = name or f"{os.environ.get('USER', 'ralph')}@{socket.gethostname()}:{os.getpid()}"
        # a warm `ralph` per slot (cli/warm.py: imports done), as a local parallel run keeps them: a loop starts warm
        self.launcher = LocalProcessLauncher(warm=slots, agents=os.environ.get("RALPH_WARM_AGENTS", "claude"))
        self.client: Client | None = None  # the worker's own, and its event loop: a loop's inbox is asked through it
        self.events: asyncio.AbstractEventLoop | None = None

    def attach(self, client: Client, events: asyncio.AbstractEventLoop) -> None:
        self.client, self.events = client, events

    # ------------------------------------------------------------------ the activities

    @activity.defn(name="ralph.prepare")
    @_told
    def prepare(self, spec: FeatureSpec) -> Prepared:
        """The stories as the remote's feature branch has them (the fleet built there: its settings checked)."""
        clone = Clone(self.workdir, spec.remote, "merges")
        with clone.lock:
            tip = clone.sync(spec.branch)
            fleet = self._fleet(clone, spec, LocalProcessLauncher())
            return Prepared(stories=_rows(fleet), tip=tip)

    @activity.defn(name="ralph.loop")
    @_told
    def loop(self, task: LoopTask) -> LoopResult:
        spec, story = task.spec, task.story
        clone = Clone(self.workdir, spec.remote)
        with _held(clone):
            tip = _beating(lambda: clone.sync(spec.branch))
            fleet = self._fleet(clone, spec, self.launcher)
            branch, tree = fleet.branch(story), fleet.worktree(story)
            gitops.remove_worktree(clone.root, tree, None)  # a dead worker's, or an earlier attempt's
            # it goes on from what was pushed when the workflow says so (the story stopped at a window's cap, or by
            # you) or when an earlier try of this very activity claimed the branch (its worker died); a new attempt
            # starts from the feature branch's tip, what it replaces saved first
            mine = StoryBranch(clone, fleet.paths.name, story, branch)
            start, resumed = mine.claim(tip, task.resume, task.token)
            activity.heartbeat(story, start)
            gitops.add_worktree(clone.root, tree, branch, start)
        where = "went on from what was pushed" if resumed else f"from {tip[:12]}"
        print(f"▶ {spec.feature}/{story}: loop started ({where})", flush=True)
        handle = self.launcher.start(fleet.loop_spec(story, task.slot, task.limits))
        assert self.client is not None and self.events is not None
        inbox = Inbox(self.client, self.events, activity.info().workflow_id or "", story)
        try:
            code = self._watch(handle, fleet, mine, inbox, spec.heartbeat_s)
        finally:
            if handle.poll() is None:
                handle.stop(fleet.grace_s)
        with activity.shield_thread_cancel_exception():  # what it did is pushed, whatever comes meanwhile
            return self._ended(fleet, clone, mine, code)

    @activity.defn(name="ralph.merge")
    @_told
    def merge(self, task: MergeTask) -> MergeResult:
        """The story through the merge queue's one step (fleet/merge.py), landing on the remote with a lease:
        rebased again while other merges land first."""
        spec, story = task.spec, task.story
        clone = Clone(self.workdir, spec.remote, "merges")
        with clone.lock:
            outcome, fleet = "moved", None
            for _ in range(MOVED_TRIES):
                tip = clone.sync(spec.branch)
                fleet = self._fleet(clone, spec, LocalProcessLauncher())
                fleet.attempts[story] = task.attempt
                self._checkout_story(fleet, clone, story, tip, task.pending)
                fleet.publish = lambda old, new: clone.push(new, f"refs/heads/{spec.branch}", lease=old)
                clone.fetch_refs(gitops.attempts_prefix(fleet.paths.name, story) + "*")  # no saved name reused
                outcome = _beating(functools.partial(merging.merge_one, fleet, story))  # its gates may run long
                if outcome != "moved":
                    break
            if outcome == "moved":  # tried again by Temporal, from the branch's new tip: never forced
                raise ApplicationError(f"{story}: {spec.branch} kept moving on {clone.remote} while it merged")
            assert fleet is not None
            clone.push_refs(gitops.attempts_prefix(fleet.paths.name, story) + "*")
            if outcome == "merged":  # the story's branch and claims are spent
                StoryBranch(clone, fleet.paths.name, story, fleet.branch(story)).forget()
            tip = clone.fetch(spec.branch) or ""
            fleet.moved()
            why = fleet.failed.get(story) or _note(fleet, story)
            done = "failed" if story in fleet.failed else ("merged" if outcome == "merged" else "retry")
            print(f"⇢ {spec.feature}/{story}: {done}{': ' + why if why and done != 'merged' else ''}", flush=True)
            return MergeResult(story, done, why, tip[:12] or None, _rows(fleet), self.name)

    # ------------------------------------------------------------------ the steps

    def _fleet(self, clone: Clone, spec: FeatureSpec, launcher: LocalProcessLauncher) -> Fleet:
        flags = {key: (value[0], str(value[1])) for key, value in spec.flags.items()}
        request = FleetRequest(
            None, flags, tuple(spec.argv), spec.parallel, None, CancelToken(), SystemClock(), launcher, {}, _say, _warn
        )
        fleet, _ = build_fleet(os.path.normpath(os.path.join(clone.root, spec.sub)), spec.feature, request)
        # a loop never waits for a usage limit's or a window's reset on a worker: it stops, and the workflow waits
        # with a timer, holding no worker (the user's policy is the workflow's: spec.stop_when_held)
        fleet.child_words = (*fleet.child_words, "--on-usage-limit", "exit")
        return fleet

    def _watch(self, handle: LoopHandle, fleet: Fleet, mine: StoryBranch, inbox: Inbox, every_s: float) -> int:
        """Until the loop ends: a heartbeat each `every_s` (with the commit this try pushed last), its commits
        pushed as it makes them, the user's requests applied and what it spent told. The worker stopping: the loop
        is stopped as on Ctrl+C, its work pushed, and the story tried again elsewhere from there. Cancelled
        (Temporal gave up on this try, whose heartbeats came late: the story may run elsewhere now), or its branch
        pushed by another try: stopped, and nothing more pushed."""
        story, tree = inbox.story, fleet.worktree(mine.story)
        paths = fleet.loop_paths(story)
        while (code := handle.poll()) is None:
            fd = handle.fileno()
            with contextlib.suppress(InterruptedError, ValueError, OSError):
                select.select([fd] if fd is not None else [], [], [], min(every_s, 2.0))
            if activity.is_worker_shutdown():
                with activity.shield_thread_cancel_exception():
                    handle.stop(fleet.grace_s)  # its iteration recorded, its attempt saved, as on Ctrl+C
                    self._push(fleet, mine, tree)
                print(f"■ {story}: the worker stops: its loop ended as on Ctrl+C, its work pushed", flush=True)
                raise ApplicationError(f"{story}: the worker {self.name} stopped during its loop")
            if activity.is_cancelled():
                handle.stop(fleet.grace_s)
                raise CancelledError(f"{story}: its loop was stopped")
            try:
                head = gitops.head_of(tree, "HEAD")
                if head is not None:
                    mine.push(head)  # the loop's own branch: no lock on the clone
            except Taken:
                handle.stop(fleet.grace_s)
                raise
            inbox.apply(paths, handle)
            inbox.report(read_json_object(paths.status) or {})
            activity.heartbeat(story, mine.pushed)
        return int(code)

    def _push(self, fleet: Fleet, mine: StoryBranch, tree: str) -> None:
        """The loop's last commit and its saved attempts, on the remote (a stopped loop's work is never left in a
        worker's clone)."""
        head = gitops.head_of(tree, "HEAD")
        if head is not None:
            mine.push(head)
        mine.clone.push_refs(gitops.attempts_prefix(fleet.paths.name, mine.story) + "*")

    def _ended(self, fleet: Fleet, clone: Clone, mine: StoryBranch, code: int) -> LoopResult:
        story = mine.story
        status = read_json_object(fleet.loop_paths(story).status) or {}
        passes = code == 0 and fleet.passes_in_worktree(story)
        pending = b""
        with _held(clone):
            clone.fetch_refs(gitops.attempts_prefix(fleet.paths.name, story) + "*")  # no saved name reused
            if passes:
                merging.collect(fleet, story)  # its pass mark and progress taken off its branch, as on one machine
                path = os.path.join(fleet.loop_paths(story).state_dir, "logs", merging.PENDING)
                with contextlib.suppress(OSError), open(path, "rb") as handle:
                    pending = handle.read(PENDING_CAP)
            head = gitops.head_of(fleet.worktree(story), "HEAD")
            self._push(fleet, mine, fleet.worktree(story))  # its leftovers, and what the loop undid, saved there
            fleet.keep_records(story)
        return LoopResult(
            story=story,
            code=code,
            passes=passes,
            exit_reason=_text(status.get("exitReason")),
            message=_text(status.get("exitMessage")),
            cost_usd=_number(status.get("costUsd")),
            tokens=int(_number(status.get("tokensUsed"))),
            resets_at=_resets(status),
            pending=pending.decode("utf-8", "replace"),
            head=head,
            worker=self.name,
        )

    def _checkout_story(self, fleet: Fleet, clone: Clone, story: str, tip: str, pending: str) -> None:
        """The story's branch, as its loop pushed it, in its worktree here; its progress entries where the
        merge takes them from."""
        branch, tree = fleet.branch(story), fleet.worktree(story)
        gitops.remove_worktree(clone.root, tree, None)
        head = clone.fetch(branch)
        if head is None:
            raise gitops.GitStep(f"the branch {branch} is not on {clone.remote}: its loop pushed nothing")
        gitops.add_worktree(clone.root, tree, branch, tip)
        logs = os.path.join(fleet.loop_paths(story).state_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        atomic_write_bytes(os.path.join(logs, merging.PENDING), pending.encode())
        fleet.collected.add(story)  # its loop's worker took the marks off already


@contextlib.contextmanager
def _held(clone: Clone) -> Iterator[None]:
    """The clone's lock for a loop's activity, its heartbeat kept while it waits (a merge may hold the lock for as
    long as its gates run: a silent wait would look like a dead worker)."""
    while not clone.lock.acquire(timeout=1.0):
        activity.heartbeat()
    try:
        yield
    finally:
        clone.lock.release()


def _beating(step: Callable[[], T]) -> T:
    """`step` (a clone, a merge's gates) run while this activity's heartbeat goes on: a long step is not a dead
    worker."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(step())
        except BaseException as error:  # handed to the activity's thread
            failed.append(error)

    worker = threading.Thread(target=run, name="ralph-step", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(timeout=2.0)
        activity.heartbeat()
    if failed:
        raise failed[0]
    return done[0]


def _rows(fleet: Fleet) -> list[StoryRow]:
    return [StoryRow(s.id, s.title, s.done, s.priority, list(s.depends_on)) for s in fleet.stories()]


def _note(fleet: Fleet, story: str) -> str | None:
    note = fleet.book.loop(story).get("note")
    return str(note) if note else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _resets(status: dict[str, Any]) -> str | None:
    """When the loop stopped at a usage limit or a cap on a window: when it resets (status.json's resetsAt)."""
    value = status.get("resetsAt")
    return value if isinstance(value, str) and value else None


def _say(text: str) -> None:
    print(text, flush=True)


def _warn(text: str) -> None:
    print(f"ralph worker: warning: {text}", file=sys.stderr, flush=True)
