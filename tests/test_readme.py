"""The README's promises: its help text is the real help, and its two commands exist and match .ci/run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "ralphloop", *args, "--help"], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.rstrip()


def test_readme_help_blocks_are_the_real_help() -> None:
    blocks = re.findall(r"```text\n(usage: .*?)\n```", README, re.DOTALL)
    assert blocks == [_help(), _help("run")]


def test_ci_runs_the_readme_test_command() -> None:
    assert "./scripts/test.sh" in README and "./scripts/demo.sh" in README
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == "./scripts/test.sh"
    for script in ("scripts/test.sh", "scripts/demo.sh", ".ci/run"):
        assert os.access(ROOT / script, os.X_OK), script


def test_the_demo_runs_to_the_end(tmp_path: Path) -> None:
    """The README's main job: a real loop over the sample project, then status and monitor on it."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RALPH_", "GIT_"))}
    gitconfig = str(tmp_path / "gitconfig")
    env.update(TMPDIR=str(tmp_path), NO_COLOR="1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=gitconfig)
    done = subprocess.run(
        [sys.executable, "-m", "ralphloop.demo"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ALL COMPLETE" in done.stdout and "Ralph has exited: complete" in done.stdout
