"""A parallel run assembled (`ralph run --parallel N`, and a Temporal worker's clone: issue 37): one feature's Fleet
(fleet/context.py) built from the same run request a single loop is built from, its settings checked as a single
run checks them, the files that steer the loops checked committed, and the branch the merge queue moves chosen."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.file_task import FileTask
from ralphloop.engine.run import Run
from ralphloop.fleet import gitops
from ralphloop.fleet.book import Book
from ralphloop.fleet.context import Fleet, Gates
from ralphloop.fleet.launcher import Launcher
from ralphloop.hooks.runner import HookRunner
from ralphloop.plugins.formats import Format, format_of
from ralphloop.project.paths import RALPH_DIR, FeaturePaths
from ralphloop.start.build import RunRequest, build_run, start_at_for
from ralphloop.tasks.sources import open_source
from ralphloop.words.argv import run_flags, without
from ralphloop.workspace import git
from ralphloop.workspace.gitignore import keep_out_of_git

# what each loop is told by its coordinator, never repeated from the user's words
_COORDINATOR_FLAGS = ("--parallel", "-s", "--story", "--resume-from", "-l", "--log-file", "--start-at", "--temporal")
_COORDINATOR_SWITCHES = ("--monitor", "-d", "--dry-run", "--child", "--no-archive", "--detach")


@dataclass(frozen=True)
class FleetRequest:
    """What every feature's fleet of one run is built from: the user's `ralph run` words, and what the features
    share (the Ctrl+C token, the clock, the launcher, the slots)."""

    target: str | None  # the positional FEATURE the user gave, if any
    flags: Mapping[str, tuple[Any, str]]  # the run's flags as settings (cli/run_cmd.py's _flags)
    argv: tuple[str, ...]  # the user's words after `ralph`
    parallel: int
    start_at: str | None
    cancel: CancelToken
    clock: Clock
    launcher: Launcher
    slots: dict[int, str]
    say: Callable[[str], None]  # a line of the run's
    warn: Callable[[str], None]  # a warning of its settings (once per feature: each loop's own go to its log)


def build_fleet(root: str, name: str | None, asked: FleetRequest) -> tuple[Fleet, str]:
    """One feature's fleet, its settings checked as a single run checks them, and its run id."""
    argv, target, cancel, clock = list(asked.argv), asked.target, asked.cancel, asked.clock
    request = RunRequest(feature=name, flags=asked.flags, archive=False, argv=asked.argv, loops=True)
    built = build_run(root, request, clock=clock, sinks=[], cancel=cancel)
    for message in built.warnings:  # once, here: each loop's own go to its log
        asked.warn(message)
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
        parallel=asked.parallel,
        max_attempts=max(1, run.policy.loop.max_retries),
        child_words=_child_words(argv, target, paths, root),
        book=Book(paths, clock),
        launcher=asked.launcher,
        clock=clock,
        cancel=cancel,
        gates=_gates(run, built.kind, cancel),
        say=asked.say,
        grace_s=run.policy.limits.kill_grace_s + 5,
        slots=asked.slots,
        feature_branch=feature_branch,
        home=home or root,
    )
    fleet.bring_in = fleet.bring_in_now()
    fleet.budget = run.policy.budget
    fleet.held, fleet.stop_when_held = run.agent.held, run.policy.usage.action == "exit"
    fleet.start_at = start_at_for(asked.start_at, paths.start_at, run.agent, asked.say)
    fleet.limits = run.policy.limits
    if built.settings.git.merge_resolve == "agent":
        fleet.resolver, fleet.runner = run.agent, run.runner
    return fleet, run.id


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
