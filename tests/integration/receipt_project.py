"""A feature with real records for `ralph report`: a git project, a prd.json, and the real `ralph run --agent
claude` with a stand-in `claude` (tests/agents/receipt_claude.py) that passes, fails, makes a claim ralph refuses,
and meets a usage limit (a wait of `usage_limit.margin_seconds`, one second) on a plan. Used by the report tests
and bench/report_screenshots.py.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

AGENTS = Path(__file__).resolve().parent.parent / "agents"
SCRIPT_TITLE = "<script>alert(1)</script>"

STORIES = (
    ("S-1", "Parse the config file"),
    ("S-2", "Retry a failed upload \x1b[31mthree times\x1b[0m"),  # an escape the agent left in its title
    ("S-3", SCRIPT_TITLE),
)
TOKENS = {"input": 3200, "output": 900, "cache_read": 120_000, "cache_write": 8000}
# Seven calls: S-1 passes; S-2 fails, is claimed without being done (refused), passes; a usage limit (not
# counted, then a wait); S-3 is started, then passes.
PLAN: tuple[dict[str, Any], ...] = (
    {"do": "pass", "cost": 0.21, **TOKENS},
    {"do": "fail", "cost": 0.08, "input": 1500, "output": 300},
    {"do": "claim", "cost": 0.12, **TOKENS},
    {"do": "pass", "cost": 0.25, **TOKENS},
    {"do": "limit", "cost": 0.0, "input": 0, "output": 0},
    {"do": "work", "cost": 0.17, **TOKENS, "model": "claude-sonnet-4-5-20250929"},
    {"do": "pass", "cost": 0.19, **TOKENS},
)
BUDGET = 5.0
CONFIG = f"""\
usage_limit:
  policy: wait
  margin_seconds: 1
budget:
  max_cost_usd: {BUDGET}
circuit_breaker:
  no_progress_threshold: 10
"""


def git(project: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def ralph(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ralphloop", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def make_project(
    project: Path,
    env: dict[str, str],
    *,
    stories: Sequence[tuple[str, str]] = STORIES,
    plan: Sequence[dict[str, Any]] = PLAN,
) -> dict[str, str]:
    """A git project at `project` with feature `feat` (prd.json, config), and a `claude` on PATH that plays
    `plan`: returns the environment a `ralph run --agent claude` there needs."""
    project.mkdir(parents=True)
    git(project, env, "init", "-q", "-b", "main")
    git(project, env, "commit", "-q", "--allow-empty", "-m", "initial")
    done = ralph(project, env, "init", "feat")
    assert done.returncode == 0, done.stderr
    feature = project / ".ralph" / "feat"
    prd = json.loads((feature / "prd.json").read_text())
    prd["userStories"] = [
        {"id": sid, "title": title, "acceptanceCriteria": ["works"], "priority": n, "passes": False}
        for n, (sid, title) in enumerate(stories, start=1)
    ]
    (feature / "prd.json").write_text(json.dumps(prd, indent=2) + "\n")
    (project / ".ralph" / "config.yaml").write_text(CONFIG)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")
    bin_dir = project.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    plan_file = project.parent / "receipt-plan.json"
    plan_file.write_text(json.dumps({"steps": list(plan), "counter": str(project.parent / "receipt-calls")}))
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENTS / "receipt_claude.py"}" "{plan_file}" "$@"\n')
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


def run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`ralph run -f feat --agent claude --no-archive ARGS` (no archive: the records stay where report reads them)."""
    return ralph(project, env, "run", "-f", "feat", "--agent", "claude", "--no-archive", *args)
