"""Fixtures for tests that need `ralph run` in the background, and cleanup of anything it leaves."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.conftest import PYTHON


class Background:
    """Starts `ralph` with Popen in the project; on teardown kills whatever the test left running."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.started: list[subprocess.Popen[str]] = []
        self.adopted: list[psutil.Process] = []

    def ralph(self, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [PYTHON, "-m", "ralphloop", *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.started.append(proc)
        return proc

    def adopt(self, pid: int | None) -> None:
        """Remember a process this test started (an agent, a grandchild) so teardown can kill it."""
        if pid is None:
            return
        with contextlib.suppress(psutil.Error):
            self.adopted.append(psutil.Process(pid))

    def adopt_tree(self, pid: int) -> None:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(pid).children(recursive=True):
                self.adopted.append(child)

    def cleanup(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                self.adopt_tree(proc.pid)
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=10)
        for process in self.adopted:
            with contextlib.suppress(psutil.Error):
                if process.is_running():  # is_running() also rules out a reused PID
                    process.kill()


@pytest.fixture
def background(project: Path, ralph_env: dict[str, str]) -> Iterator[Background]:
    runner = Background(project, ralph_env)
    try:
        yield runner
    finally:
        runner.cleanup()


@pytest.fixture
def tmux_env(ralph_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private tmux server (TMUX_TMPDIR, killed afterwards) and a HOME whose .tmux.conf sets base-index
    and pane-base-index to 1, as many users do: ralph addresses panes by id, so it must not matter."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".tmux.conf").write_text("set -g base-index 1\nsetw -g pane-base-index 1\n")
    sockets = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # a socket path must stay short
    env = {key: value for key, value in ralph_env.items() if key not in ("TMUX", "TMUX_PANE")}
    env.update(HOME=str(home), TMUX_TMPDIR=sockets, TERM="xterm-256color")
    try:
        yield env
    finally:
        subprocess.run(["tmux", "kill-server"], env=env, capture_output=True, check=False)
        shutil.rmtree(sockets, ignore_errors=True)
