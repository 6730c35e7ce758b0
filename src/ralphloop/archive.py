"""Archives (seed 003 F9): `.ralph/archive/<timestamp>-<feature>/`, a copy of the feature folder."""

from __future__ import annotations

import os
import shutil
from datetime import datetime

from ralphloop.paths import FeaturePaths

# Locks and half-written temporary files mean nothing outside a live run.
_SKIP = shutil.ignore_patterns(".lock", ".tmp-*")


def archive_copy(paths: FeaturePaths, now: datetime) -> str:
    """Copy the feature folder into the archive; the folder itself stays. Returns the new folder."""
    os.makedirs(paths.archive_root, exist_ok=True)
    stamp = now.strftime("%Y%m%d-%H%M%S")
    target = os.path.join(paths.archive_root, f"{stamp}-{paths.name}")
    suffix = 1
    while os.path.exists(target):
        suffix += 1
        target = os.path.join(paths.archive_root, f"{stamp}-{paths.name}-{suffix}")
    staging = target + ".partial"
    shutil.copytree(paths.dir, staging, ignore=_SKIP, symlinks=True)
    os.replace(staging, target)  # a half-copied archive never carries the final name
    return target
