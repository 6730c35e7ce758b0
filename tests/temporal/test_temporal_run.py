"""`ralph run --parallel N --temporal` with `ralph worker`s on two "machines" (issue 37), against the real Temporal
dev server: real git (a bare repository as the remote), real child loops, the real stand-in agent of the parallel
tests, which commits its work with `git add -A`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PYTHON, agent_cmd
from tests.integration.helpers import git, parallel_feature
from tests.temporal.machines import start_worker, with_remote

pytestmark = pytest.mark.slow
BRANCH = "ralph/feat"


def _stories(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"S-{n}", "title": f"Story {n}", "priority": n, "passes": False, "acceptanceCriteria": ["works"]}
        for n in range(1, count + 1)
    ]


def _remote_file(remote: Path, env: dict[str, str], path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{BRANCH}:{path}"], cwd=remote, env=env, capture_output=True, text=True, check=True
    ).stdout


def _passing(remote: Path, env: dict[str, str]) -> list[str]:
    stories = json.loads(_remote_file(remote, env, ".ralph/feat/prd.json"))["userStories"]
    return sorted(story["id"] for story in stories if story["passes"])


def _run(
    project: Path, env: dict[str, str], address: str, *more: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", "run", "--parallel", "3", "--temporal", address, *more],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_six_stories_on_two_workers_each_merged_once_on_the_remote(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(6))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    ledger = tmp_path / "ledger"
    workers = [start_worker(name, temporal_server.address, tmp_path, ralph_env) for name in ("machine-a", "machine-b")]
    try:
        done = _run(
            project,
            ralph_env,
            temporal_server.address,
            "--agent-cmd",
            agent_cmd("fleet_agent.py", "--ledger", str(ledger), "--sleep", "0.5"),
        )
        assert done.returncode == 0, done.stdout + done.stderr + "".join(w.output() for w in workers)
    finally:
        codes = [worker.stop() for worker in workers]
    assert codes == [0, 0], [w.output() for w in workers]
    assert _passing(remote, ralph_env) == [f"S-{n}" for n in range(1, 7)]
    for n in range(1, 7):
        assert _remote_file(remote, ralph_env, f"work-S-{n}.txt").rstrip("\n") == f"done S-{n}"
    subjects = subprocess.run(
        ["git", "log", "--format=%s", f"main..{BRANCH}"],
        cwd=remote,
        env=ralph_env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    marks = [line for line in subjects if line.endswith("passes (merged by ralph)")]
    assert sorted(marks) == sorted(f"S-{n}: passes (merged by ralph)" for n in range(1, 7))  # each merged once
    starts = ledger.read_text().splitlines()
    assert sorted(line.split()[0] for line in starts) == [f"S-{n}" for n in range(1, 7)]  # each worked once
    # both machines worked
    assert all("loop started" in worker.output() for worker in workers), [w.output() for w in workers]
    assert "All 6 stories merged into ralph/feat." in done.stdout, done.stdout
