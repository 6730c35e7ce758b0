"""A throwaway git project with one feature, for the benchmarks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

ENV = {
    **{key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@ralphloop.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@ralphloop.invalid",
    "NO_COLOR": "1",
}
RALPH = [sys.executable, "-m", "ralphloop"]

# Lets a long run of an agent that changes nothing (or always fails) go on: thresholds a user may set.
PATIENT_CONFIG = """\
defaults:
  rate_limit_per_hour: 100000
max_retries: 1000
circuit_breaker:
  no_progress_threshold: 1000
  same_error_threshold: 1000
  failure_threshold: 1000
"""


def make_project(
    stories: int = 3,
    *,
    files: int = 0,
    ralph: list[str] | None = None,
    env: dict[str, str] | None = None,
    config: str | None = None,
) -> tuple[str, dict[str, str]]:
    """A git repo with `.ralph/feat/prd.json` of `stories` open stories; returns (root, env).

    Everything is committed, with `files` small source files; `ralph` is the command whose `init` makes the
    feature (default: this interpreter's ralphloop); `config` replaces .ralph/config.yaml."""
    base = tempfile.mkdtemp(prefix="ralph-bench-")
    root = os.path.join(base, "project")
    os.makedirs(root)
    env = {**(env or ENV), "RALPH_HOME": os.path.join(base, "home")}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=root, env=env, check=True)
    subprocess.run([*(ralph or RALPH), "init", "feat"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
    prd_path = os.path.join(root, ".ralph", "feat", "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    prd["userStories"] = [
        {"id": f"S-{n}", "title": f"Story {n}", "acceptanceCriteria": ["works"], "priority": n, "passes": False}
        for n in range(1, stories + 1)
    ]
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    if config is not None:
        with open(os.path.join(root, ".ralph", "config.yaml"), "w", encoding="utf-8") as handle:
            handle.write(config)
    write_sources(root, files)
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)  # a clean workspace, as a user's would be
    subprocess.run(["git", "commit", "-q", "-m", "project"], cwd=root, env=env, check=True)
    return root, env


def write_sources(root: str, count: int) -> None:
    """`count` small files in a tree like a real project's: 100 per folder, half of them one level deeper."""
    for number in range(count):
        folder = os.path.join(root, "src", f"pkg{number // 100:04d}", *(["sub"] if number % 2 else []))
        if number % 100 < 2:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"mod{number:05d}.py"), "w", encoding="utf-8") as handle:
            handle.write(f"VALUE = {number}\n")


def ralph_executable() -> str:
    """The installed `ralph` console script next to this Python (what users run)."""
    candidate = os.path.join(os.path.dirname(sys.executable), "ralph")
    if not os.path.exists(candidate):
        sys.exit("bench: install the project first (./scripts/test.sh or pip install -e .)")
    return candidate


def run_loop(root: str, env: dict[str, str], iterations: int, ralph: list[str] | None = None) -> None:
    """A real `ralph run` whose agent does nothing, so the feature has state, status and logs."""
    subprocess.run(
        [*(ralph or RALPH), "run", "-n", str(iterations), "--agent-cmd", "true"],
        cwd=root,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
