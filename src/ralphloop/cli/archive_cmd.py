"""`ralph archive [-f F]`: copy the feature into .ralph/archive/ and remove it, so its name can start afresh."""

from __future__ import annotations

import argparse
import os
import shutil

from ralphloop.archive import archive_copy
from ralphloop.errors import RalphError
from ralphloop.paths import display_path, find_project_root, resolve_feature
from ralphloop.protocols import SystemClock
from ralphloop.state.store import RunLock


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature)
    if not paths.is_feature_folder:  # a plan folder or the project root is the user's own: never removed
        raise RalphError(
            f"{paths.display()}: ralph archive moves feature folders in .ralph/ only; this folder is yours to keep"
        )
    # Holding the run lock means no loop is writing into the folder while it moves.
    with RunLock(paths.lock, f"ralph run for {paths.name}"):
        target = archive_copy(paths, SystemClock().now())
        shutil.rmtree(paths.dir)
    print(f"Archived {paths.display()} to {display_path(target, os.getcwd())} and removed {paths.display()}")
    return 0
