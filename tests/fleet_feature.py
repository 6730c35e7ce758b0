"""A feature with the files of a parallel run (docs/parallel.md), as `ralph status`, the monitor and their tests read
them: fleet.json written through its schema (state/fleet.py's FLEET and LOOP), each loop in a real git worktree
on its own branch, one loop's records written by a real `ralph run` in its worktree (a stand-in `claude` that reports
a cost) and the others' copied from them with the numbers a test chooses, a merged loop's records kept in `loops/`.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ralphloop.state.fleet import FLEET, FLEET_LOCK, LOOP, LOOPS_DIR
from tests.conftest import AGENTS, PYTHON, write_prd
from tests.monitor_feature import FIXTURE, edit

STORIES = 6
FLEET_ID = "fleet-1"

# story → (state, attempt, what its status.json says beside the real run's: None = no records yet)
PLAN: dict[str, tuple[str, int, dict[str, Any] | None]] = {
    "S-1": ("merged", 1, {"iteration": 2, "iterationsCounted": 2, "costUsd": 0.25, "status": "complete"}),
    "S-2": ("running", 1, {}),  # the real run's status.json as it wrote it (made "running" by its held lock)
    "S-3": ("failed", 3, {"iteration": 4, "iterationsCounted": 4, "costUsd": 0.75, "status": "complete"}),
    "S-4": ("queued", 1, {"iteration": 1, "iterationsCounted": 1, "costUsd": 0.5, "status": "complete"}),
    "S-5": ("merging", 2, {"iteration": 3, "iterationsCounted": 3, "costUsd": 0.0041, "status": "complete"}),
    "S-6": ("waiting", 0, None),
}
NOTES = {"S-3": "rebase conflict in app.txt, 3 attempts of 3", "S-6": "after S-1"}


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def claude_on_path(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` with a stand-in `claude` (tests/agents/claude_costs.py: $0.60 a call) first on PATH."""
    folder.mkdir(exist_ok=True)
    claude = folder / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "claude_costs.py"}" "$@"\n')
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    return {**env, "PATH": f"{folder}{os.pathsep}{env['PATH']}"}


def worktree_of(project: Path, story: str) -> Path:
    """Where the coordinator puts a story's worktree: outside the project, under git's own folder."""
    return project / ".git" / "ralph-worktrees" / "feat" / story


def make_fleet(project: Path, env: dict[str, str], tmp_path: Path, *, parallel: int = 3) -> Path:
    """The feature `feat` of `project` (made by `ralph init`) with a fleet of six loops (PLAN), the coordinator
    not running (fleet.json says running: `ralph status` calls it stopped). Returns the feature folder."""
    feature = project / ".ralph" / "feat"
    prd = write_prd(feature, STORIES)
    body = json.loads(prd.read_text())
    body["userStories"][0]["passes"] = True  # S-1 merged: the coordinator marked it on the feature branch
    prd.write_text(json.dumps(body, indent=2))
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "feat")
    real = _real_run(project, env, tmp_path)
    loops = []
    for story, (state, attempt, numbers) in PLAN.items():
        branch, worktree = f"ralph/feat/{story}", worktree_of(project, story)
        folder = worktree / ".ralph" / "feat"
        if state == "merged":  # its worktree removed, its records kept in the feature's loops/<story>/
            folder = feature / LOOPS_DIR / story
        elif story != "S-2" and state != "waiting":
            git(project, env, "worktree", "add", "-q", "-b", branch, str(worktree))
        if numbers is not None and story != "S-2":
            _copy_records(real, folder, story, numbers)
        loops.append(
            LOOP.dump(
                {
                    "story": story,
                    "title": f"Story {story[2:]}",
                    "state": state,
                    "slot": None if state in ("waiting", "merged") else int(story[2:]) % parallel,
                    "attempt": attempt,
                    "maxAttempts": 3,
                    "branch": "" if state == "waiting" else branch,
                    "worktree": "" if state == "waiting" else str(worktree),
                    "featureDir": "" if state == "waiting" else str(worktree / ".ralph" / "feat"),
                    "startedAt": "2026-11-21T02:00:00Z",
                    "commit": "0123456789abcdef0123456789abcdef01234567" if state == "merged" else None,
                    "note": NOTES.get(story),
                }
            )
        )
    write_fleet(feature, loops=loops, queue=["S-4"], storiesMerged=1, parallel=parallel)
    return feature


@contextmanager
def held(lock: Path) -> Iterator[None]:
    """A lock held as by a live `ralph run` or coordinator (a real flock by this process, its PID in the file)."""
    with open(lock, "w") as handle:
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def coordinator(feature: Path) -> Path:
    """The coordinator's lock of a feature: held, the fleet is running."""
    return feature / FLEET_LOCK


def fixture_fleet(feature: Path, plan: dict[str, tuple[str, dict[str, Any] | None]], **fleet: Any) -> dict[str, Path]:
    """A fleet for `feature` without git: each planned loop (story → state, status.json's changes or None for no
    records) gets a copy of the monitor's fixture feature as its worktree's feature folder. The loops' folders."""
    folders = {}
    for story, (_, changes) in plan.items():
        worktree = feature.parent.parent.parent / "worktrees" / story
        folder = worktree / ".ralph" / "feat"
        if changes is not None:
            shutil.copytree(FIXTURE, folder)
            edit(folder / "status.json", featureDir=str(folder), logFile="", **changes)
        folders[story] = folder
    loops = [
        LOOP.dump(
            {
                "story": story,
                "state": state,
                "attempt": 1,
                "maxAttempts": 3,
                "branch": f"ralph/feat/{story}",
                "worktree": str(folders[story].parent.parent),
                "featureDir": str(folders[story]),
                "note": f"why {story} is {state}",
            }
        )
        for story, (state, _) in plan.items()
    ]
    write_fleet(feature, loops=loops, **{"storiesTotal": len(plan), **fleet})
    return folders


def write_fleet(folder: Path, **values: Any) -> None:
    """fleet.json in a feature folder, through its schema (FLEET): a fleet of `values` over these defaults."""
    body = FLEET.dump(
        {
            "fleetId": FLEET_ID,
            "feature": folder.name,
            "featureDir": str(folder),
            "pid": 999_999,
            "startedAt": "2026-11-21T02:00:00Z",
            "updatedAt": "2026-11-21T02:30:00Z",
            "target": "feat",
            "storiesTotal": STORIES,
            **values,
        },
        versioned=True,
    )
    (folder / "fleet.json").write_text(json.dumps(body, indent=2))


def _real_run(project: Path, env: dict[str, str], tmp_path: Path) -> Path:
    """S-2's loop: one iteration of the real `ralph run -s S-2` in its own worktree; its feature folder."""
    worktree = worktree_of(project, "S-2")
    git(project, env, "worktree", "add", "-q", "-b", "ralph/feat/S-2", str(worktree))
    done = subprocess.run(
        [PYTHON, "-m", "ralphloop", "run", "-f", "feat", "-s", "S-2", "-n", "1", "--agent", "claude", "-t", "30m"],
        cwd=worktree,
        env=claude_on_path(tmp_path / "bin", env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and "Summary:" in done.stdout, done.stdout + done.stderr  # -n 1: max iterations
    return worktree / ".ralph" / "feat"


def _copy_records(real: Path, folder: Path, story: str, numbers: dict[str, Any]) -> None:
    """A loop's status.json and state.json: the real run's, with this loop's own numbers."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("status.json", "state.json", "prd.json"):
        shutil.copy(real / name, folder / name)
    status = json.loads((folder / "status.json").read_text())
    status.update(currentStory=f"{story} - Story {story[2:]}", featureDir=str(folder), maxIterations=10, **numbers)
    (folder / "status.json").write_text(json.dumps(status))
