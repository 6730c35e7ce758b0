"""`ralph run --parallel N --temporal HOST:PORT [--detach]` (issue 37): the feature checked here exactly as a local
parallel run checks it (start/fleet.py), then handed to its workflow (temporal/launch.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ralphloop.cli.temporal_flags import needs_extra, queue_of, server_of
from ralphloop.config.scale import ScaleSettings
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.fleet.launcher import LocalProcessLauncher
from ralphloop.start.fleet import FleetRequest, build_fleet
from ralphloop.words.argv import run_flags
from ralphloop.words.textsafe import strip_terminal_controls


def run_on_temporal(
    args: argparse.Namespace,
    argv: list[str],
    root: str,
    target: str | None,
    flags: dict[str, tuple[Any, str]],
    names: list[str | None],
    scale: ScaleSettings,
) -> int:
    needs_extra()
    if len(names) > 1:
        raise RalphError("--temporal runs one feature a run: give it with -f FEATURE (one workflow each)")
    for given, flag in ((args.monitor, "--monitor"), (args.start_at, "--start-at")):  # the workers' business
        if given:
            raise RalphError(f"{flag} is not for a run on Temporal: follow it with `ralph status` from any machine")
    server, queue = server_of(args, scale), queue_of(args, scale)
    request = FleetRequest(
        target,
        flags,
        tuple(argv),
        args.parallel,
        None,
        CancelToken(),
        SystemClock(),
        LocalProcessLauncher(),
        {},
        _say,
        _warn,
    )
    fleet, _ = build_fleet(root, names[0], request)
    from ralphloop.temporal.launch import RECORD, check_pushed, remote_of, spec_of, start

    remote = remote_of(fleet)
    check_pushed(fleet, remote)
    words = ["run", *run_flags(argv, target)]  # the feature is the spec's own: a worker names it itself
    return start(server, spec_of(fleet, remote, words, flags, queue), args.detach, fleet.paths.file(RECORD))


def _say(text: str) -> None:
    print(strip_terminal_controls(text), flush=True)


def _warn(text: str) -> None:
    print(f"ralph: warning: {text}", file=sys.stderr)
