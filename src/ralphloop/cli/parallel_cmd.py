"""`ralph run --parallel N`: the feature and its settings checked as a single run checks them, the branch the
merge queue moves chosen, then the coordinator (fleet/coordinator.py) driven under the feature's locks."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Callable
from typing import Any

from ralphloop.cli.monitor_launch import in_tmux
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.file_task import FileTask
from ralphloop.core.protocols import iso
from ralphloop.core.waiting import count_down
from ralphloop.engine.run import Run
from ralphloop.files.store import RunLock
from ralphloop.fleet import gitops
from ralphloop.fleet.book import Book
from ralphloop.fleet.budget import Spending
from ralphloop.fleet.context import FLEET_ENV, Fleet, Gates
from ralphloop.fleet.coordinator import coordinate
from ralphloop.fleet.launcher import LocalProcessLauncher
from ralphloop.guards.budget import Budget
from ralphloop.hooks.runner import HookRunner
from ralphloop.plugins.formats import Format, detect, format_of
from ralphloop.project.paths import RALPH_DIR, FeaturePaths, list_features
from ralphloop.start.build import RunRequest, build_run, start_at_for
from ralphloop.tasks.sources import open_source
from ralphloop.words.argv import run_flags, without
from ralphloop.words.figures import local_time
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.workspace import git
from ralphloop.workspace.gitignore import keep_out_of_git
from ralphloop.workspace.worktree_lock import WorktreeLock

# what each loop is told by its coordinator, never repeated from the user's words
_COORDINATOR_FLAGS = ("--parallel", "-s", "--story", "--resume-from", "-l", "--log-file", "--start-at")
_COORDINATOR_SWITCHES = ("--monitor", "-d", "--dry-run", "--child", "--no-archive")


def run_parallel(
    args: argparse.Namespace,
    argv: list[str],
    root: str,
    target: str | None,
    flags: dict[str, tuple[Any, str]],
    features: list[str],
) -> int:
    if args.story or args.resume_from:
        raise RalphError("--parallel runs every ready story of the feature: give it without -s or --resume-from")
    if args.dry_run:
        raise RalphError("--parallel has no --dry-run: give it without --parallel to see a loop's prompt and command")
    cancel, clock = CancelToken(), SystemClock()
    names = _selected(root, target, features)
    slots: dict[int, str] = {}
    agents = args.agent or ("command" if args.agent_cmd else "claude")  # a hint: the backends to import ahead
    launcher = LocalProcessLauncher(warm=args.parallel, agents=agents)  # warm loops start now, as the features are read
    try:
        return _coordinate(args, argv, root, target, flags, names, launcher, cancel, clock, slots)
    finally:
        launcher.close()


def _coordinate(
    args: argparse.Namespace,
    argv: list[str],
    root: str,
    target: str | None,
    flags: dict[str, tuple[Any, str]],
    names: list[str | None],
    launcher: LocalProcessLauncher,
    cancel: CancelToken,
    clock: SystemClock,
    slots: dict[int, str],
) -> int:
    built = [_fleet(args, argv, root, target, name, flags, (cancel, clock, launcher), slots) for name in names]
    fleets = [fleet for fleet, _ in built]
    # everything this run starts carries its id: what a kill of it leaves running is found by the next run
    os.environ[FLEET_ENV] = built[0][1]
    if args.monitor and in_tmux(argv, fleets[0].paths, sys.stdin.isatty() and sys.stdout.isatty()):
        return 0  # the run goes on in tmux, beside the monitor of its (first) feature's fleet
    budget = _budget(fleets)
    spending = Spending(budget, clock.monotonic(), fleets=fleets) if budget.any else None
    for fleet in fleets:
        fleet.several = len(fleets) > 1
        fleet.spending = spending
    previous = {signal.SIGINT: signal.getsignal(signal.SIGINT), signal.SIGTERM: signal.getsignal(signal.SIGTERM)}
    for number in previous:
        signal.signal(number, lambda *_: cancel.set())
    wakeup = cancel.wake_on_signals()  # a signal just before a wait still wakes it (core/cancel.py)
    try:
        with contextlib.ExitStack() as locks:
            locks.enter_context(WorktreeLock(fleets[0].paths, tuple(run_flags(argv, target))))
            for fleet, run_id in built:
                what = f"ralph run --parallel for {fleet.paths.name}"
                locks.enter_context(RunLock(fleet.paths.lock, what))
                locks.enter_context(RunLock(fleet.book.lock_path, what))
                fleet.book.fleet.update(
                    fleetId=run_id,
                    feature=fleet.paths.name,
                    featureDir=fleet.paths.dir,
                    parallel=args.parallel,
                    pid=os.getpid(),
                    startedAt=fleet.book.now(),
                    target=fleet.target,
                    bringIn=fleet.bring_in,
                    exitReason=None,
                    exitMessage=None,
                    resolverCostUsd=None,
                )
                print(
                    f"Parallel run of {fleet.paths.selector}: {len(fleet.stories())} stories, merged into "
                    f"{fleet.target}",
                    flush=True,
                )
            print(f"Up to {args.parallel} loops at once.", flush=True)
            reason = coordinate(fleets) if _started_at(fleets[0]) else ExitReason.INTERRUPTED
            if reason is not ExitReason.INTERRUPTED and fleets[0].start_at is not None:
                fleets[0].start_at.clear()  # spent: the same flag another day means that day
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(wakeup)
    for fleet in fleets:
        _report(fleet, reason)
    if reason is ExitReason.INTERRUPTED:
        command = shlex.join(["ralph", "run", *run_flags(argv, target)])
        print(f"To continue, run: {command}" + "".join(f" {fleet.paths.flag}" for fleet in fleets if fleet.paths.flag))
    return reason.exit_code


def _started_at(fleet: Fleet) -> bool:
    """`--start-at`: wait for its instant before any loop starts (fleet.json says so); False when interrupted."""
    at = fleet.start_at.due(fleet.clock.now()) if fleet.start_at is not None else None
    if at is None or fleet.start_at is None:
        return True
    said = f"--start-at {fleet.start_at.spec}: starting at {local_time(at)}"
    _say(f"⏳ {said} (Ctrl+C to stop)")
    fleet.book.write(held={"message": said, "until": iso(at)})
    seconds = (at - fleet.clock.now()).total_seconds()
    waited = count_down(fleet.clock, fleet.cancel, lambda event: None, seconds, "start", said)  # fleet.json tells it
    fleet.book.write(held=None)
    return waited


def _say(text: str) -> None:
    """A line of the run's: story ids, titles and a loop's last words come from files an agent can write."""
    print(strip_terminal_controls(text), flush=True)


def _selected(root: str, target: str | None, features: list[str]) -> list[str | None]:
    """The features to run: FEATURE or each -f; without them, every feature of the project whose format can run in
    parallel (None: the one the project has, found as a single run finds it)."""
    if target:
        return [target]
    if features:
        return list(dict.fromkeys(features))
    names = [name for name in list_features(root) if _parallel(os.path.join(root, RALPH_DIR, name))]
    return list(names) if len(names) > 1 else [None]


def _parallel(folder: str) -> bool:
    kind = detect(folder)
    return kind is not None and format_of(kind).parallel


def _fleet(
    args: argparse.Namespace,
    argv: list[str],
    root: str,
    target: str | None,
    name: str | None,
    flags: dict[str, tuple[Any, str]],
    shared: tuple[CancelToken, SystemClock, LocalProcessLauncher],
    slots: dict[int, str],
) -> tuple[Fleet, str]:
    """One feature's fleet, its settings checked as a single run checks them, and its run id."""
    cancel, clock, launcher = shared
    request = RunRequest(feature=name, flags=flags, archive=False, argv=tuple(argv), loops=True)
    built = build_run(root, request, clock=clock, sinks=[], cancel=cancel)
    for message in built.warnings:  # once, here: each loop's own go to its log
        print(f"ralph: warning: {message}", file=sys.stderr)
    run, paths = built.run, built.run.paths
    task_format = format_of(built.kind)
    if not task_format.parallel:
        raise RalphError(
            f"--parallel runs the stories of a prd.json feature (or of a task format that can run in parallel); "
            f"{paths.display()} holds a {built.kind} workspace: run it without --parallel"
        )
    if run.workspace is None:
        raise RalphError("--parallel needs a git repository: each loop works in a git worktree of its own")
    top = run.workspace.top
    feature_branch = built.branch or git.current_branch(root)
    if not feature_branch:
        raise RalphError("--parallel needs a branch to merge into: HEAD is detached (git switch -c NAME)")
    task_file = os.path.join(paths.dir, task_format.task_file)
    _check_committed(root, top, paths, task_file)
    target_branch, landing, home = _target(root, paths, feature_branch, built.settings.git.fast_forward_checked_out)
    _check_target(root, top, task_file, task_format, target_branch, feature_branch)
    os.makedirs(paths.state_dir, exist_ok=True)
    # fleet.json, fleet.jsonl, loops/ and the locks, as a single run's files: out of the user's next `git add -A`
    keep_out_of_git(paths, agent_patterns=run.agent.runtime_files)
    fleet = Fleet(
        root=root,
        paths=paths,
        task_format=task_format,
        task_rel=os.path.relpath(task_file, top),
        progress_rel=os.path.relpath(paths.progress, top),
        feature_rel=os.path.relpath(paths.dir, top),
        sub=os.path.relpath(root, top),
        target=target_branch,
        landing_tree=landing,
        parallel=args.parallel,
        max_attempts=max(1, run.policy.loop.max_retries),
        child_words=_child_words(argv, target, paths, root),
        book=Book(paths, clock),
        launcher=launcher,
        clock=clock,
        cancel=cancel,
        gates=_gates(run, built.kind, cancel),
        say=_say,
        grace_s=run.policy.limits.kill_grace_s + 5,
        slots=slots,
        feature_branch=feature_branch,
        home=home or root,
    )
    fleet.bring_in = fleet.bring_in_now()
    fleet.budget = run.policy.budget
    fleet.held, fleet.stop_when_held = run.agent.held, run.policy.usage.action == "exit"
    fleet.start_at = start_at_for(args.start_at, paths.start_at, run.agent, _say)
    fleet.limits = run.policy.limits
    if built.settings.git.merge_resolve == "agent":
        fleet.resolver, fleet.runner = run.agent, run.runner
    return fleet, run.id


def _budget(fleets: list[Fleet]) -> Budget:
    """The run's budget: the first feature's settings (the flags are every feature's; a config's may differ)."""
    return fleets[0].budget or Budget()


def _check_committed(root: str, top: str, paths: FeaturePaths, task_file: str) -> None:
    """The files that steer the loops must be committed: each loop starts from a commit, never from this tree."""
    for path in (task_file, paths.prompt, os.path.join(root, RALPH_DIR, "config.yaml")):
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            here = handle.read(16 << 20)
        if gitops.blob(root, "HEAD", os.path.relpath(path, top)) != here:
            shown = os.path.relpath(path, os.getcwd())  # the command is pasted where ralph was run
            raise RalphError(
                f"{shown}: has changes that are not committed; each parallel loop starts from a commit: "
                f"commit it first (git add {shlex.quote(shown)} && git commit)"
            )


def _check_target(root: str, top: str, task_file: str, task_format: Format, target: str, branch: str) -> None:
    """The loops start from `target`: its task file must be valid and hold the stories this one holds (their marks
    aside), or stories would be skipped or a run of none would say it is complete."""
    rel = os.path.relpath(task_file, top)
    shown = os.path.relpath(task_file, os.getcwd())
    read: Callable[[bytes, str], list[FileTask]] = task_format.part(task_format.tasks_in)
    mine = _stories_without_marks(read, gitops.blob(root, "HEAD", rel))
    theirs_raw = gitops.blob(root, f"refs/heads/{target}", rel)
    if theirs_raw is None:
        raise RalphError(f"{shown}: not on branch {target}, where the loops start: {_bring(root, target, branch)}")
    theirs = {story.id: story.body for story in read(theirs_raw, f"{shown} on branch {target}")}  # or its problem
    differ = sorted(sid for sid in set(mine) | set(theirs) if mine.get(sid) != theirs.get(sid))
    if differ:
        raise RalphError(
            f"{shown}: the stories on branch {target} differ from yours ({', '.join(differ[:5])}); the loops start "
            f"from {target}: {_bring(root, target, branch)}"
        )


def _bring(root: str, target: str, branch: str) -> str:
    """How the user puts the task file they have where the loops start, as a command that works when pasted."""
    if target != branch:  # the integration branch holds merged work the feature branch lacks
        return f"bring {target}'s work into {branch} first (git merge {shlex.quote(target)}), then run again"
    here = git.current_branch(root)
    if here and here != target:
        return f"put your change there first (git switch {shlex.quote(target)} && git merge {shlex.quote(here)})"
    return f"commit your task file on {target} first"


def _stories_without_marks(read: Callable[[bytes, str], list[FileTask]], raw: bytes | None) -> dict[str, str]:
    """Each story's fields but its mark, by id (what the coordinator may change); {} when it cannot be read."""
    try:
        return {story.id: story.body for story in read(raw or b"", "")}
    except RalphError:
        return {}


def _target(root: str, paths: FeaturePaths, branch: str, consent: bool) -> tuple[str, str | None, str | None]:
    """The branch the queue moves, the worktree to fast-forward (when the user consented) and the worktree that
    has the feature branch checked out. Never a ref moved under a worktree that has it checked out."""
    if gitops.head_of(root, f"refs/heads/{branch}") is None:
        git.run(root, "branch", branch, "HEAD")  # prd.json's branchName, made as a single run would
    holder = gitops.checked_out(root).get(f"refs/heads/{branch}")
    integration = gitops.integration_branch(paths.name)
    tip = gitops.tip_of(root, branch)
    kept = gitops.head_of(root, f"refs/heads/{integration}")
    if kept is not None and kept != tip and not gitops.contains(root, kept, tip):
        gitops.make_branch(root, integration, tip)  # holds merged work not brought in yet: the queue goes on from it
        return integration, None, holder
    if holder is None:
        return branch, None, None
    if consent:
        return branch, holder, holder
    gitops.make_branch(root, integration, tip)
    return integration, None, holder


def _child_words(argv: list[str], target: str | None, paths: FeaturePaths, root: str) -> tuple[str, ...]:
    """A loop's flags: the user's, less the coordinator's own; the feature as found from the project's folder in
    the loop's worktree, where it runs."""
    words = without(run_flags(argv, target), *_COORDINATOR_FLAGS)
    words = [word for word in words if word not in _COORDINATOR_SWITCHES]
    feature = paths.name if paths.is_feature_folder else os.path.relpath(paths.dir, root)
    return (*words, "--child", "--no-archive", f"--feature={feature}")


def _gates(run: Run, kind: str, cancel: CancelToken) -> Gates:
    """The run's quality gates over a loop's rebased worktree."""

    def check(loop: FeaturePaths, story: str) -> tuple[str, ...]:
        if not run.policy.gates:
            return ()
        runner = HookRunner(
            paths=loop,
            agent=run.agent,
            runner=run.runner,
            hooks=run.policy.hooks,
            gates=run.policy.gates,
            limits=run.policy.limits,
            cancel=cancel,
            emit=lambda event: None,
            model=run.policy.agent.model,
        )
        return runner.run_gates(runner.context_for(open_source(loop, kind), story, 0, "")).failures

    return check


def _report(fleet: Fleet, reason: ExitReason) -> None:
    merged, total = len(fleet.passing()), len(fleet.stories())
    name = f"{fleet.paths.selector}: " if fleet.several else ""
    if merged == total:
        print(f"{name}All {total} stories merged into {fleet.target}.")
    elif reason is ExitReason.INTERRUPTED:
        print(f"{name}Interrupted: {merged}/{total} stories merged.")
    else:
        print(f"{name}Stopped: {merged}/{total} stories merged into {fleet.target}.")
        held = fleet.book.fleet.get("held")
        if reason is ExitReason.USAGE_WINDOW and isinstance(held, dict):
            _say(f"  {held.get('message')}; run again then (or with a higher --max-window)")
        for story, why in fleet.failed.items():
            _say(f"  {story}: {why}")
    if fleet.bring_in:
        where = f"{fleet.feature_branch}, run in {fleet.home}"
        print(f"To bring {fleet.paths.selector}'s work into {where}: {fleet.bring_in}")
