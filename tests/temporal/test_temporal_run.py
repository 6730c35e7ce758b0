"""`ralph run --parallel N --temporal` with `ralph worker`s on two "machines" (issue 37), against the real Temporal
dev server: real git (a bare repository as the remote), real child loops, the real stand-in agent of the parallel
tests, which commits its work with `git add -A`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import AGENTS, PYTHON, agent_cmd
from tests.integration.helpers import git, parallel_feature
from tests.temporal.conftest import TEMPORAL
from tests.temporal.machines import merge_marks, ralph_in, start_run, start_worker, wait_for, with_remote

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
    marks = merge_marks(remote, ralph_env, BRANCH)
    assert sorted(marks) == sorted(f"S-{n}: passes (merged by ralph)" for n in range(1, 7))  # each merged once
    starts = ledger.read_text().splitlines()
    assert sorted(line.split()[0] for line in starts) == [f"S-{n}" for n in range(1, 7)]  # each worked once
    # both machines worked
    assert all("loop started" in worker.output() for worker in workers), [w.output() for w in workers]
    assert "All 6 stories merged into ralph/feat." in done.stdout, done.stdout


def test_the_client_killed_changes_nothing_the_run_finishes_and_status_shows_it(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(4))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    worker = start_worker("machine-a", temporal_server.address, tmp_path, ralph_env, slots=2)
    try:
        client = start_run(
            project, ralph_env, temporal_server.address, 2, "--agent-cmd", agent_cmd("fleet_agent.py", "--sleep", "1")
        )
        assert client.stdout is not None
        for line in client.stdout:
            if "started in slot" in line:
                break
        client.kill()  # SIGKILL: nothing of the run is in this process
        client.wait()
        running = ralph_in(project, ralph_env, "status")
        assert running.returncode == 0, running.stderr
        assert "Engine:     temporal: workflow ralph-" in running.stdout, running.stdout
        wait_for(lambda: _passing(remote, ralph_env) == ["S-1", "S-2", "S-3", "S-4"], timeout=90)

        def ended() -> bool:
            shown = ralph_in(project, ralph_env, "status")
            return "complete" in shown.stdout

        wait_for(ended, timeout=30)
        shown = ralph_in(project, ralph_env, "status")
        assert "Fleet:      complete · 4 / 4 stories merged" in shown.stdout, shown.stdout
        # from another machine's clone, which never started it: the config names the server, the id follows
        other = tmp_path / "other-clone"
        subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(other)], env=ralph_env, check=True)
        with (other / ".ralph" / "config.yaml").open("a") as config:
            config.write(f"\nparallel:\n  engine: temporal\ntemporal:\n  address: {temporal_server.address}\n")
        there = ralph_in(other, ralph_env, "status")
        assert "Fleet:      complete · 4 / 4 stories merged" in there.stdout, there.stdout + there.stderr
    finally:
        assert worker.stop() == 0, worker.output()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_a_worker_killed_or_stopped_mid_story_its_stories_finish_on_the_other_merged_once(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any, how: signal.Signals
) -> None:
    parallel_feature(project, ralph_env, _stories(2))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    ledger = tmp_path / "ledger"
    env = {**ralph_env, "RALPH_TEMPORAL_HEARTBEAT": "1"}
    doomed = start_worker("machine-a", temporal_server.address, tmp_path, env, slots=2)
    client = start_run(
        project,
        env,
        temporal_server.address,
        2,
        "--agent-cmd",
        agent_cmd("fleet_agent.py", "--ledger", str(ledger), "--sleep", "10"),
    )
    other = None
    try:
        wait_for(lambda: ledger.exists() and len(ledger.read_text().splitlines()) == 2, timeout=60)
        first = {line.split()[0]: int(line.split()[1]) for line in ledger.read_text().splitlines()}
        other = start_worker("machine-b", temporal_server.address, tmp_path, env, slots=2)
        code = doomed.stop(how)
        assert code == (-signal.SIGKILL if how == signal.SIGKILL else 0), doomed.output()
        out, _ = client.communicate(timeout=120)
        assert client.returncode == 0, out + doomed.output() + other.output()
    finally:
        if client.poll() is None:
            client.kill()
        if other is not None:
            assert other.stop() == 0, other.output()
    assert _passing(remote, ralph_env) == ["S-1", "S-2"]
    assert sorted(merge_marks(remote, ralph_env, BRANCH)) == [
        "S-1: passes (merged by ralph)",
        "S-2: passes (merged by ralph)",
    ]  # merged once each
    starts = ledger.read_text().splitlines()
    assert sorted(line.split()[0] for line in starts) == ["S-1", "S-1", "S-2", "S-2"]  # each again on machine-b
    assert other.output().count("went on from what was pushed") == 2, other.output()
    if how == signal.SIGTERM:  # stopped, not killed: it ended each loop as on Ctrl+C and pushed its work first
        assert doomed.output().count("the worker stops: its loop ended as on Ctrl+C, its work pushed") == 2
    # the killed machine's loops and agents died with it (their parent's death signal): nothing left running
    for pid in first.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    leftovers = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if str(tmp_path / "machine-a") in " ".join(p.info["cmdline"] or [])
    ]
    assert leftovers == []


def test_the_server_restarted_mid_run_every_workflow_resumes_and_finishes(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(4))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    ledger = tmp_path / "ledger"
    worker = start_worker("machine-a", temporal_server.address, tmp_path, ralph_env, slots=2)
    try:
        started = _run(
            project,
            ralph_env,
            temporal_server.address,
            "--detach",
            "--agent-cmd",
            agent_cmd("fleet_agent.py", "--ledger", str(ledger), "--sleep", "3"),
        )
        assert started.returncode == 0, started.stdout + started.stderr
        assert "Detached" in started.stdout
        # a second `ralph run` attaches to the running workflow (its id is the repository's and the feature's)
        follower = start_run(project, ralph_env, temporal_server.address, 3, "--agent-cmd", agent_cmd("fleet_agent.py"))
        assert follower.stdout is not None
        seen = [follower.stdout.readline()]  # attached: the workflow's id, then its lines
        assert seen[0].startswith("Workflow ralph-"), seen
        wait_for(lambda: ledger.exists() and len(ledger.read_text().splitlines()) >= 2, timeout=60)
        temporal_server.stop()  # its SQLite file is kept: the same server comes back
        temporal_server.start()
        out, _ = follower.communicate(timeout=120)
        out = seen[0] + out
        assert follower.returncode == 0, out
        assert "All 4 stories merged into ralph/feat." in out, out
        wait_for(lambda: _passing(remote, ralph_env) == ["S-1", "S-2", "S-3", "S-4"], timeout=120)

        def ended() -> bool:
            shown = ralph_in(project, ralph_env, "status")
            return "Fleet:      complete · 4 / 4 stories merged" in shown.stdout

        wait_for(ended, timeout=60)
    finally:
        assert worker.stop() == 0, worker.output()
    assert len(merge_marks(remote, ralph_env, BRANCH)) == 4  # each once
    # each worked (a loop whose heartbeats the restart cut may be tried again: it goes on from its claim)
    assert {line.split()[0] for line in ledger.read_text().splitlines()} == {"S-1", "S-2", "S-3", "S-4"}


def test_a_usage_window_reached_the_workflow_waits_on_a_timer_with_no_worker_busy_then_goes_on(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(2))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"  # Claude Code's stand-in: the parallel tests' agent, answering in stream-json
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "fleet_agent.py"}" --claude-cost 0.01 "$@"\n')
    claude.chmod(0o755)
    config = tmp_path / "claude-config"
    env = {**ralph_env, "PATH": f"{bin_dir}:{ralph_env['PATH']}", "CLAUDE_CONFIG_DIR": str(config)}
    # the worker's machine knows the account's 5-hour window is 60% used, and resets in a few seconds
    resets = datetime.now(UTC) + timedelta(seconds=20)
    window = {"utilization": 0.6, "resetsAt": resets.strftime("%Y-%m-%dT%H:%M:%SZ"), "readAt": "2026-12-06T22:00:00Z"}
    book = {"schema_version": 1, "limits": {}, "windows": {f"claude/login:{config}": {"five_hour": window}}}
    home = tmp_path / "machine-a" / "ralph-home"
    home.mkdir(parents=True)
    (home / "agent-limits.json").write_text(json.dumps(book))
    worker = start_worker("machine-a", temporal_server.address, tmp_path, env, slots=2)
    try:
        run = start_run(project, env, temporal_server.address, 2, "--agent", "claude", "--max-window", "five_hour=50%")
        assert run.stdout is not None
        lines = []
        for line in run.stdout:
            lines.append(line)
            if "no new loop starts until" in line:
                break
        # the wait is the workflow's timer: no activity is pending on the server (a loop runs only inside one)
        wid = lines[0].split()[1]

        def pending() -> list[Any]:
            described = subprocess.run(
                [str(TEMPORAL), "workflow", "describe", "-w", wid, "--address", temporal_server.address, "-o", "json"],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            found: list[Any] = json.loads(described.stdout).get("pendingActivities") or []
            return found

        wait_for(lambda: not pending(), timeout=10)  # the other loop, held at the cap as well, ends too
        for _ in range(3):  # and none starts while the timer waits
            time.sleep(0.5)
            assert not pending()
        assert datetime.now(UTC) < resets, "the window reset before the worker was looked at"
        out, _ = run.communicate(timeout=120)
        out = "".join(lines) + out
    finally:
        assert worker.stop() == 0, worker.output()
    assert run.returncode == 0, out
    assert "claude's 5-hour window is 60% used, at or past your cap of 50%" in out
    assert "the usage window reset: loops start again" in out
    assert "All 2 stories merged into ralph/feat." in out
    assert _passing(remote, ralph_env) == ["S-1", "S-2"]


def _claude(tmp_path: Path, *flags: str) -> dict[str, str]:
    """Claude Code's stand-in on PATH: the parallel tests' agent, answering in stream-json with a cost."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    script = " ".join(f'"{flag}"' for flag in flags)
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "fleet_agent.py"}" {script} "$@"\n')
    claude.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}


def test_the_runs_budget_spent_no_new_loop_starts_and_the_running_one_is_stopped(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(4))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    ledger = tmp_path / "ledger"
    flags = ("--claude-cost", "0.25", "--ledger", str(ledger), "--sleep", "1", "--slow", "S-2=30")
    env = {**ralph_env, **_claude(tmp_path, *flags), "RALPH_TEMPORAL_HEARTBEAT": "1"}
    worker = start_worker("machine-a", temporal_server.address, tmp_path, env, slots=2)
    try:
        done = subprocess.run(
            [PYTHON, "-m", "ralphloop", "run", "--parallel", "2", "--temporal", temporal_server.address,
             "--agent", "claude", "--max-cost", "0.2"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        assert worker.stop() == 0, worker.output()
    assert done.returncode == ExitReason.BUDGET.exit_code, done.stdout + done.stderr
    assert "■ Budget: the agents spent $0.25 of the run's $0.20 (--max-cost)" in done.stdout, done.stdout
    assert "S-2: stopped: the run's budget is spent" in worker.output()  # its loop, stopped mid-story
    assert sorted(line.split()[0] for line in ledger.read_text().splitlines()) == ["S-1", "S-2"]  # none after
    assert _passing(remote, ralph_env) == ["S-1"]
    assert "Stopped (budget): 1/4 stories merged into ralph/feat" in done.stdout


def test_a_conflict_is_retried_on_the_new_base_its_work_saved_on_the_remote_and_a_push_of_yours_is_kept(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    stories = _stories(3)
    stories[2]["dependsOn"] = ["S-1"]  # the story queue: S-3 only once S-1 is merged
    parallel_feature(project, ralph_env, stories)
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    worker = start_worker("machine-a", temporal_server.address, tmp_path, ralph_env, slots=2)
    mine = tmp_path / "mine"  # a person's clone, pushing to the feature branch while the run goes on
    subprocess.run(["git", "clone", "-q", "-b", BRANCH, str(remote), str(mine)], env=ralph_env, check=True)
    command = agent_cmd("fleet_agent.py", "--shared", "shared.txt", "--sleep", "2")
    run = start_run(project, ralph_env, temporal_server.address, 2, "--agent-cmd", command)
    try:
        assert run.stdout is not None
        lines = []
        for line in run.stdout:
            lines.append(line)
            if "S-2 started" in line:
                break
        (mine / "NOTES.md").write_text("mine\n")
        git(mine, ralph_env, "add", "NOTES.md")
        git(mine, ralph_env, "commit", "-qm", "a note of mine")
        git(mine, ralph_env, "push", "-q", "origin", BRANCH)
        out, _ = run.communicate(timeout=180)
        out = "".join(lines) + out
    finally:
        if run.poll() is None:
            run.kill()
        assert worker.stop() == 0, worker.output()
    assert run.returncode == 0, out
    assert _passing(remote, ralph_env) == ["S-1", "S-2", "S-3"]
    assert _remote_file(remote, ralph_env, "NOTES.md") == "mine\n"  # never overwritten
    assert "↻ " in out and "started again on the new base (attempt 2)" in out, out
    saved = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/ralph/attempts/"], cwd=remote, env=ralph_env,
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert any(ref.endswith("-merge-1") for ref in saved), saved  # the conflicting attempt, kept on the remote
    assert out.index("⇢ S-1 merged") < out.index("▶ S-3 started"), out
    assert len(merge_marks(remote, ralph_env, BRANCH)) == 3


def test_a_story_stopped_at_a_windows_cap_goes_on_from_its_pushed_work_after_the_reset(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    parallel_feature(project, ralph_env, _stories(1))
    git(project, ralph_env, "branch", BRANCH)
    remote = with_remote(project, ralph_env, tmp_path, "main", BRANCH)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    counter = tmp_path / "calls"
    script = AGENTS / "windowed_claude.py"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{script}" "{counter}" 12 "$@"\n')
    claude.chmod(0o755)
    env = {
        **ralph_env,
        "PATH": f"{bin_dir}:{ralph_env['PATH']}",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "RALPH_TEMPORAL_HEARTBEAT": "1",
    }
    worker = start_worker("machine-a", temporal_server.address, tmp_path, env, slots=1)
    try:
        done = subprocess.run(
            [PYTHON, "-m", "ralphloop", "run", "--parallel", "1", "--temporal", temporal_server.address,
             "--agent", "claude", "--max-window", "five_hour=50%"],
            cwd=project, env=env, capture_output=True, text=True, timeout=150, check=False,
        )  # fmt: skip
    finally:
        assert worker.stop() == 0, worker.output()
    assert done.returncode == 0, done.stdout + done.stderr + worker.output()
    assert "5-hour window is 60% used, at or past your cap of 50%" in done.stdout, done.stdout
    assert "went on from what was pushed" in worker.output(), worker.output()  # not a fresh start: its half kept
    assert _remote_file(remote, ralph_env, "part-1.txt") == "S-1: the first half\n"
    assert _remote_file(remote, ralph_env, "part-2.txt") == "S-1: the second half\n"
    assert counter.read_text() == "2"  # one call before the cap, one after the reset
