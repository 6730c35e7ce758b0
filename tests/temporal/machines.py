"""Two "machines" for the Temporal tests: a bare repository as the remote, and `ralph worker`s each with a home, a
RALPH_HOME and a workdir of its own, started as real processes and stopped (or SIGKILLed) by the test."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import PYTHON
from tests.integration.helpers import git


def with_remote(project: Path, env: dict[str, str], tmp_path: Path, *branches: str) -> Path:
    """The project's remote: a bare repository `origin` holding `branches`."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], env=env, check=True)
    git(project, env, "remote", "add", "origin", str(remote))
    for branch in branches:
        git(project, env, "push", "-q", "origin", branch)
    return remote


@dataclass
class Worker:
    name: str
    process: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)


def start_worker(name: str, address: str, tmp_path: Path, env: dict[str, str], *more: str, slots: int = 2) -> Worker:
    machine = tmp_path / name
    (machine / "home").mkdir(parents=True, exist_ok=True)
    own = {**env, "HOME": str(machine / "home"), "RALPH_HOME": str(machine / "ralph-home")}
    log = machine / "worker.log"
    with log.open("a") as out:
        process = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "ralphloop",
                "worker",
                "--temporal",
                address,
                "--slots",
                str(slots),
                "--workdir",
                str(machine / "work"),
                *more,
            ],
            cwd=machine,
            env=own,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    worker = Worker(name, process, log)
    deadline = time.monotonic() + 30
    while "ralph worker" not in worker.output():
        assert process.poll() is None, worker.output()
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.1)
    return worker


def descendants_alive(pid: int) -> list[int]:
    """Processes still running that were started under `pid` (their RALPH tags aside: by parentage)."""
    import psutil

    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True) if child.is_running()]
    except psutil.NoSuchProcess:
        return []


def wait_for(condition, timeout: float = 60, every: float = 0.2) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(every)


def env_without_git_sandbox(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key != "RALPH_SANDBOX"} | {"RALPH_SANDBOX": "off"}


__all__ = ["Worker", "descendants_alive", "os", "start_worker", "wait_for", "with_remote"]


def ralph_in(folder: Path, env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`ralph ARGS` run to its end in `folder`."""
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip


def start_run(project: Path, env: dict[str, str], address: str, parallel: int, *more: str) -> subprocess.Popen[str]:
    """`ralph run --parallel N --temporal ADDRESS MORE` in the background, its output on a pipe."""
    return subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "run", "--parallel", str(parallel), "--temporal", address, *more],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def merge_marks(remote: Path, env: dict[str, str], branch: str) -> list[str]:
    """The subjects of the pass-mark commits on the remote's `branch` (one per story merged)."""
    subjects = subprocess.run(
        ["git", "log", "--format=%s", f"main..{branch}"], cwd=remote, env=env, capture_output=True, text=True,
        check=True,
    ).stdout.splitlines()  # fmt: skip
    return [line for line in subjects if line.endswith("passes (merged by ralph)")]
