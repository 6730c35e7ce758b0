"""The monitor's fixture feature (tests/fixtures/monitor/running) copied into a project, edited, and held as a
live `ralph run` would hold it: what the monitor's and `ralph status`'s unit tests read."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "monitor" / "running"


def copy_feature(tmp_path: Path, **status: Any) -> Path:
    """The fixture as feature `feat2` of a project in `tmp_path`, status.json pointing at the copy's log (and
    changed by `status`)."""
    folder = tmp_path / "project" / ".ralph" / "feat2"
    shutil.copytree(FIXTURE, folder)
    log = str(folder / "logs" / "iteration-2.log")
    edit(folder / "status.json", **{"featureDir": str(folder), "logFile": log, **status})
    return folder


def edit(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@contextmanager
def held(folder: Path) -> Iterator[Path]:
    """The feature's lock held, as by a live `ralph run` (a real flock, by this process)."""
    with open(folder / ".lock", "w") as handle:
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield folder
