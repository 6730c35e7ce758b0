"""`ralph archive [-f F]`: move the feature into .ralph/archive/<timestamp>-<feature>/ (seed 003), so its name can
start afresh. Refused while a run holds the feature's lock."""

from __future__ import annotations

import argparse
import os

from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.files.store import RunLock
from ralphloop.project.archive import archive_feature
from ralphloop.project.paths import display_path, find_project_root
from ralphloop.project.resolve import resolve_feature


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature, command=("archive",))
    if not paths.is_feature_folder:  # a plan folder or the project root is the user's own: never removed
        raise RalphError(
            f"{paths.display()}: ralph archive moves feature folders in .ralph/ only; this folder is yours to keep"
        )
    archive = display_path(paths.archive_root, os.getcwd())
    if os.path.lexists(paths.archive_root) and not os.path.isdir(paths.archive_root):
        raise RalphError(f"{archive}: not a folder: could not archive {paths.name}")
    try:
        # Holding the run lock means no loop is writing into the folder while it moves.
        with RunLock(paths.lock, f"ralph run for {paths.name}"):
            if not os.path.isdir(paths.dir):  # another `ralph archive` moved it while this one looked
                raise RalphError(f"{paths.display()}: no longer there (archived meanwhile?)")
            target = archive_feature(paths, SystemClock().now())
    except FileNotFoundError:
        raise RalphError(f"{paths.display()}: no longer there (archived meanwhile?)") from None
    except OSError as exc:
        raise RalphError(f"{paths.display()}: could not archive: {exc.strerror or exc}") from None
    print(f"Archived {paths.display()} to {display_path(target, os.getcwd())}")
    return 0
