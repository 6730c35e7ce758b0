"""`ralph reset-circuit [-f F]`: close the circuit breaker with zeroed counters (seed 000, UC-6)."""

from __future__ import annotations

import argparse
import os

from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import check_file
from ralphloop.files.store import RunLock
from ralphloop.guards.breaker import Breaker
from ralphloop.project.owner import check_state_folder
from ralphloop.project.paths import display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.state.circuit import append_history, load_breaker, save_breaker
from ralphloop.state.runstate import RunState
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.workspace.gitignore import keep_out_of_git


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature, command=("reset-circuit",))
    label = display_path(paths.circuit_state, os.getcwd())
    # A damaged breaker is what a reset is for, but a folder, a FIFO or a link in the place of the folder or a file
    # it writes is not ralph's to replace: refused, naming it, before anything is written.
    check_state_folder(paths.state_dir, display_path(paths.state_dir, os.getcwd()))
    for path in (paths.circuit_state, paths.circuit_history):
        check_file(path, display_path(path, os.getcwd()), follow=False)
    # A running loop keeps its breaker in memory and would write over the reset: refuse while one runs.
    os.makedirs(paths.state_dir, exist_ok=True)  # .ralph/ of a root workspace before its first run
    keep_out_of_git(paths)  # the breaker's files and the lock, never the user's next commit
    with RunLock(paths.lock, f"ralph run for {paths.name}"):
        try:
            breaker = load_breaker(paths.circuit_state, label)
            was = breaker.state.value
        except RalphError:  # a damaged file is exactly what a reset is for: start from a fresh one
            breaker, was = Breaker(), "unreadable"
        iteration = RunState.load(paths.state, paths.logs).iteration
        reason = strip_terminal_controls(" ".join(args.reason.split())) or "manual reset by user"
        fresh, transition = breaker.reset(reason, SystemClock().now(), iteration)
        save_breaker(paths.circuit_state, fresh, iteration)
        append_history(paths.circuit_history, [transition])
    print(f"Circuit breaker reset to CLOSED state ({paths.selector}: was {was}; reason: {reason})")
    return 0
