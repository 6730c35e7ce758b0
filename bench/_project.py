"""A throwaway git project with one feature, for the benchmarks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@ralphloop.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@ralphloop.invalid",
    "NO_COLOR": "1",
}


def make_project(stories: int = 3) -> tuple[str, dict[str, str]]:
    """A git repo with `.ralph/feat/prd.json` of `stories` open stories; returns (root, env)."""
    base = tempfile.mkdtemp(prefix="ralph-bench-")
    root = os.path.join(base, "project")
    os.makedirs(root)
    env = {**ENV, "RALPH_HOME": os.path.join(base, "home")}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=root, env=env, check=True)
    subprocess.run(
        [sys.executable, "-m", "ralphloop", "init", "feat"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL
    )
    prd_path = os.path.join(root, ".ralph", "feat", "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    prd["userStories"] = [
        {"id": f"S-{n}", "title": f"Story {n}", "acceptanceCriteria": ["works"], "priority": n, "passes": False}
        for n in range(1, stories + 1)
    ]
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    return root, env


def ralph_executable() -> str:
    """The installed `ralph` console script next to this Python (what users run)."""
    candidate = os.path.join(os.path.dirname(sys.executable), "ralph")
    if not os.path.exists(candidate):
        sys.exit("bench: install the project first (./scripts/test.sh or pip install -e .)")
    return candidate


def run_loop(root: str, env: dict[str, str], iterations: int) -> None:
    """A real `ralph run` whose agent does nothing, so the feature has state, status and logs."""
    subprocess.run(
        [sys.executable, "-m", "ralphloop", "run", "-n", str(iterations), "--agent-cmd", "true"],
        cwd=root,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
