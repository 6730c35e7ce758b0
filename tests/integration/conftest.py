"""Fixtures for tests that need `ralph run` in the background, and cleanup of anything it leaves."""

from __future__ import annotations

import contextlib
import subprocess
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
