"""Played-back turns for the engine's git tests: an agent that also runs git (harness.py's `Turn` writes, commits
and marks; tests/agents/step_agent.py's `git` step is this one), and what it found as its iteration started."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.engine.harness import Turn, _write, git_out


@dataclass(frozen=True)
class GitTurn:
    """`turn`'s files written (and committed, with its `commit`), then `git` run in the project, each command
    whatever it exits with (a merge stopped by a conflict is the point), then the rest of `turn`: its marks, its
    output, its exit. `seen`, when given, gets what the launch found first (`found_at_start`)."""

    turn: Turn
    git: Sequence[Sequence[str]] = ()
    seen: list[dict[str, Any]] | None = None

    def recording(self, launch: Launch) -> Recording:
        """This turn as the recording of the run `launch` starts."""
        root = Path(launch.cwd)
        if self.seen is not None:
            self.seen.append(found_at_start(launch))
        work = Turn(write=self.turn.write, commit=self.turn.commit, first=self.turn.first).recording(launch)
        _write(root, work.edits)
        quiet = {**os.environ, "GIT_EDITOR": "true"}  # never an editor: a merge that goes through takes its message
        for args in self.git:
            subprocess.run(["git", *args], cwd=root, env=quiet, capture_output=True, check=False)
        return dataclasses.replace(self.turn, write={}, commit=None, first=None).recording(launch)


def found_at_start(launch: Launch) -> dict[str, Any]:
    """What step_agent.py's `record` notes: the iteration, HEAD, the branch and `git status` as it found them."""
    root = Path(launch.cwd)
    branch = subprocess.run(
        ["git", "symbolic-ref", "-q", "HEAD"], cwd=root, capture_output=True, text=True, check=False
    )
    return {
        "iteration": int(launch.command.env["RALPH_ITERATION"]),
        "head": git_out(root, "rev-parse", "HEAD").strip(),
        "branch": branch.stdout.strip(),
        "status": sorted(git_out(root, "status", "--porcelain", "--untracked-files=all").splitlines()),
    }
