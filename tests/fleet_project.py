"""A parallel run's files as its coordinator lays them out (src/ralphloop/state/fleet.py, docs/parallel.md):
fleet.json in the feature folder, each loop's worktree with its own feature folder, status.json and an iteration
log (Claude's stream-json), and the locks held as live processes hold them. What `ralph serve`'s tests read."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import write_prd

SCRIPT_TITLE = "<script>alert(1)</script> & <b>bold</b>"


@dataclass(frozen=True)
class Loop:
    story: str
    title: str
    state: str  # fleet.json's LOOP_STATES
    cost: float = 0.0
    iteration: int = 1
    activity: str | None = None


THREE = (
    Loop("S-1", "Parse the config file", "merged", cost=0.21, iteration=1),
    Loop("S-2", "Retry a failed upload", "running", cost=0.05, iteration=2, activity="Bash: pytest -q"),
    Loop("S-3", SCRIPT_TITLE, "running", cost=0.0, iteration=1, activity="Edit: src/app.py"),
)


def stream_line(text: str) -> str:
    """One line of Claude's stream-json: the assistant saying `text`."""
    return json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})


def make_fleet(project: Path, loops: tuple[Loop, ...] = THREE, feature: str = "feat") -> Path:
    """The feature folder of a fleet of `loops` in `project` (made if missing); the worktrees beside it."""
    folder = project / ".ralph" / feature
    write_prd(folder, [{"id": loop.story, "title": loop.title, "passes": loop.state == "merged"} for loop in loops])
    entries = [
        _loop_files(project.parent / "worktrees" / loop.story, feature, loop, slot) for slot, loop in enumerate(loops)
    ]
    write_fleet(folder, loops=entries, queue=[], merged=sum(loop.state == "merged" for loop in loops))
    return folder


def write_fleet(folder: Path, *, loops: list[dict[str, Any]], queue: list[str], merged: int, **more: Any) -> None:
    """fleet.json written as the coordinator writes it: whole, then renamed over the old one."""
    body = {
        "schema_version": 1,
        "fleetId": "f-1",
        "feature": folder.name,
        "featureDir": str(folder),
        "parallel": 3,
        "status": "running",
        "pid": os.getpid(),
        "startedAt": "2026-11-21T02:00:00Z",
        "updatedAt": "2026-11-21T02:10:00Z",
        "target": f"feature/{folder.name}",
        "loops": loops,
        "queue": queue,
        "storiesTotal": len(loops),
        "storiesMerged": merged,
        **more,
    }
    temporary = folder / ".tmp-fleet.json"
    temporary.write_text(json.dumps(body, indent=2))
    temporary.replace(folder / "fleet.json")


def read_loops(folder: Path) -> list[dict[str, Any]]:
    loops: list[dict[str, Any]] = json.loads((folder / "fleet.json").read_text())["loops"]
    return loops


def _loop_files(worktree: Path, feature: str, loop: Loop, slot: int) -> dict[str, Any]:
    child = worktree / ".ralph" / feature
    write_prd(child, [{"id": loop.story, "title": loop.title, "passes": loop.state == "merged"}])
    log = child / "logs" / f"iteration-{loop.iteration}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("\n".join(stream_line(f"{loop.story} line {n}") for n in range(1, 51)) + "\n")
    running = loop.state == "running"
    status = {
        "schema_version": 1,
        "iteration": loop.iteration,
        "iterationsCounted": loop.iteration - 1 if running else loop.iteration,
        "inIteration": running,
        "maxIterations": 5,
        "status": "running" if running else "complete",
        "feature": feature,
        "featureDir": str(child),
        "storiesComplete": 0 if running else 1,
        "storiesTotal": 1,
        "currentStory": loop.story,
        "agent": "claude",
        "logFile": str(log),
        "costUsd": loop.cost,
        "activity": loop.activity,
        "iterationStartedAt": "2026-11-21T02:05:00Z" if running else None,
        "lastOutputAt": "2026-11-21T02:06:00Z" if running else None,
        "lastUpdated": "2026-11-21T02:06:00Z",
    }
    (child / "status.json").write_text(json.dumps(status, indent=2))
    return {
        "story": loop.story,
        "title": loop.title,
        "state": loop.state,
        "slot": slot,
        "attempt": 1,
        "maxAttempts": 3,
        "branch": f"ralph/{feature}/{loop.story}",
        "worktree": str(worktree),
        "featureDir": str(child),
        "pid": os.getpid() if running else None,
        "startedAt": "2026-11-21T02:05:00Z",
    }


@contextmanager
def live(folder: Path) -> Iterator[None]:
    """The coordinator's lock and every running loop's held, as by live processes (real flocks, this process's)."""
    with ExitStack() as stack:
        locks = [folder / ".fleet.lock"]
        locks += [Path(loop["featureDir"]) / ".lock" for loop in read_loops(folder) if loop["state"] == "running"]
        for path in locks:
            handle = stack.enter_context(open(path, "w"))
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
