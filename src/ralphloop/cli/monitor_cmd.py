"""`ralph monitor [-f F] [--wait]`: a live dashboard of a feature's loop, from its state files alone."""

from __future__ import annotations

import os
import sys

from ralphloop.cli.temporal_where import fleet_reader
from ralphloop.monitor.live import Watch, follow
from ralphloop.monitor.snapshot import ended_fleet, ended_run
from ralphloop.project.paths import find_project_root
from ralphloop.project.resolve import resolve_feature

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature, command=("monitor",), archived=True)
    # --wait: a run that has already ended is not shown; the monitor waits for the next one.
    # --skip-run (from `ralph run --monitor`): the run that had ended when the loop was launched.
    skip = args.skip_run or (ended_run(paths) if args.wait else None)
    terminal = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    waiting = bool(args.wait or args.skip_run or args.beside_run)
    fleets = fleet_reader  # fleet.json, or a run's workflow on Temporal, read once a second (issue 37)
    # the same for a parallel run that has ended: its fleet is not shown until its coordinator runs again
    ended = ended_fleet(paths, fleets) if waiting else None
    watch = Watch(paths, skip=skip, waiting=waiting, skip_fleet=ended, fleets=fleets)
    return follow(watch, sys.stdout, terminal=terminal)
