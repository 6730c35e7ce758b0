"""`ralph run --parallel N`: the feature and its settings checked as a single run checks them, the branch the
merge queue moves chosen, then the coordinator (fleet/coordinator.py) driven under the feature's locks."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
from typing import Any

from ralphloop.cli.monitor_launch import in_tmux
from ralphloop.config.settings import load_settings
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import iso
from ralphloop.core.waiting import count_down
from ralphloop.files.store import RunLock
from ralphloop.fleet.budget import Spending
from ralphloop.fleet.context import FLEET_ENV, Fleet
from ralphloop.fleet.coordinator import coordinate
from ralphloop.fleet.launcher import LocalProcessLauncher
from ralphloop.guards.budget import Budget
from ralphloop.plugins.formats import detect, format_of
from ralphloop.project.paths import RALPH_DIR, list_features
from ralphloop.start.fleet import FleetRequest, build_fleet
from ralphloop.words.argv import run_flags
from ralphloop.words.figures import local_time
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.workspace.worktree_lock import WorktreeLock


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
    names = _selected(root, target, features)
    scale = load_settings(root, flags).scale  # `parallel.engine: temporal` in the config, or --temporal
    if args.temporal or scale.engine == "temporal":  # the coordinator is the feature's workflow (issue 37)
        from ralphloop.cli.temporal_run import run_on_temporal

        return run_on_temporal(args, argv, root, target, flags, names, scale)
    if args.detach:
        raise RalphError("--detach is for a run on Temporal: give it with --temporal HOST:PORT")
    cancel, clock = CancelToken(), SystemClock()
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
    request = FleetRequest(
        target, flags, tuple(argv), args.parallel, args.start_at, cancel, clock, launcher, slots, _say, _warn
    )
    built = [build_fleet(root, name, request) for name in names]
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


def _warn(text: str) -> None:
    print(f"ralph: warning: {text}", file=sys.stderr)


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


def _budget(fleets: list[Fleet]) -> Budget:
    """The run's budget: the first feature's settings (the flags are every feature's; a config's may differ)."""
    return fleets[0].budget or Budget()


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
