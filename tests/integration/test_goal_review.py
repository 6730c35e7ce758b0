"""Review of goal mode, lifecycle hooks and quality gates: bugs a user would hit, shown with real `ralph run`
processes in real git repositories. Each test names a bug the review found. Here: Ctrl+C while background or end hooks
run (real signals, real hook processes) and a hook id too long for its log's name (the CLI's one-line error); what
the loop decides and records is tests/engine/test_goal_review.py's, in-process."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PYTHON, RalphRunner
from tests.integration.helpers import pid_alive, read_pid, wait_until
from tests.integration.test_goal_mode import (
    GOAL_AGENT,
    SPRINT_DIR,
    progress_yaml,
    run_goal,
    sprint_yaml,
    write_sprint,
)


def configure(project: Path, text: str) -> None:
    """Append YAML `text` to .ralph/config.yaml (made when missing)."""
    (project / ".ralph").mkdir(exist_ok=True)
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + text)


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def result_block(result: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(result) + "\n```"


@contextmanager
def running_ralph(project: Path, env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    """`ralph ARGS` in the background; killed at the end if still running."""
    proc = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def kill_group(pid: int | None) -> None:
    """Clean up a hook process (and its process group) a test left behind."""
    if pid is None or not pid_alive(pid):
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- Ctrl+C and background or end hooks


def slow_hook_sprint(project: Path, env: dict[str, str], pidfile: Path) -> Path:
    hooks = f"""\
    - id: slow
      command: echo $$ > {shlex.quote(str(pidfile))}; exec sleep 60
      parallel: true
    """
    return write_sprint(project, env, sprint_yaml(hooks=hooks))


def test_ctrl_c_while_waiting_for_background_hooks_stops_them(
    project: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "hook.pid"
    folder = slow_hook_sprint(project, ralph_env, pidfile)
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}  # complete in iteration 1: then ralph waits for the hook
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            time.sleep(0.5)
            os.kill(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pytest.fail("one Ctrl+C did not stop the wait for the background hook (still running after 15 s)")
            assert not pid_alive(read_pid(pidfile) or 0)
            task = progress_yaml(folder)["hook-tasks"][0]
            assert task["status"] == "failed", task
    finally:
        kill_group(read_pid(pidfile))


def test_a_second_ctrl_c_leaves_no_background_hook_running(
    project: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "hook.pid"
    folder = slow_hook_sprint(project, ralph_env, pidfile)
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            time.sleep(0.5)
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(1)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)  # "Ctrl+C again to quit at once"
            proc.wait(timeout=15)
        hook = read_pid(pidfile)
        assert hook is not None
        assert wait_until(lambda: not pid_alive(hook), limit=5), "the background hook outlived ralph"
        statuses = [task["status"] for task in progress_yaml(folder)["hook-tasks"]]
        assert "spawned" not in statuses, statuses
    finally:
        kill_group(read_pid(pidfile))


def test_a_second_ctrl_c_leaves_no_end_hook_running(project: Path, ralph_env: dict[str, str], tmp_path: Path) -> None:
    pidfile = tmp_path / "end-hook.pid"
    configure(project, f"hooks:\n  on_complete: echo $$ > {shlex.quote(str(pidfile))}; exec sleep 60\n")
    write_sprint(project, ralph_env, sprint_yaml())
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(1)
            os.kill(proc.pid, signal.SIGINT)  # "Ctrl+C again to quit at once"
            proc.wait(timeout=15)
            assert proc.returncode == 130
        hook = read_pid(pidfile)
        assert hook is not None
        assert wait_until(lambda: not pid_alive(hook), limit=5), "the on_complete hook outlived ralph"
    finally:
        kill_group(read_pid(pidfile))


# ---------------------------------------------------------------- a hook that cannot start


def test_a_hook_id_too_long_to_name_its_log_is_a_one_line_error(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """A hook id names its log and prompt files: one too long for a file name (ENAMETOOLONG once crashed the
    run after the hook was recorded as spawned) is refused before anything starts."""
    hooks = f"""\
    - id: extract-{"x" * 300}
      prompt: Read $ITERATION_TRANSCRIPT
      parallel: false
    """
    write_sprint(project, ralph_env, sprint_yaml(hooks=hooks))

    done = run_goal(ralph, "-n", "2")

    assert "internal error" not in output(done), output(done)
    assert done.returncode == 1
    assert "at most 100 characters" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
