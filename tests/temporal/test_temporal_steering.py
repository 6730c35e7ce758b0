"""The steer commands of a parallel run on Temporal (issues 36 and 37): `ralph pause|resume|stop|say` are the
workflow's signals, and each running loop's worker applies them to the loop's own control.json. Real dev server,
real worker, the paced agent of the steering tests (it waits for a gate file per iteration)."""

from __future__ import annotations

import http.client
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import agent_cmd
from tests.integration.helpers import git, parallel_feature
from tests.integration.test_serve_control import post
from tests.serve_process import serving
from tests.temporal.machines import ralph_in, start_run, start_worker, wait_for, with_remote

pytestmark = pytest.mark.slow
BRANCH = "ralph/feat"


def _setup(project: Path, env: dict[str, str], tmp_path: Path, address: str) -> tuple[Path, Path, Any]:
    stories = [
        {"id": f"S-{n}", "title": f"Story {n}", "priority": n, "passes": False, "acceptanceCriteria": ["works"]}
        for n in (1, 2, 3)
    ]
    parallel_feature(project, env, stories)
    git(project, env, "branch", BRANCH)
    remote = with_remote(project, env, tmp_path, "main", BRANCH)
    (tmp_path / "gates").mkdir()
    worker = start_worker("machine-a", address, tmp_path, env, slots=2)
    return remote, tmp_path / "agent.log", worker


def _started(log: Path, story: str, number: int = 1) -> bool:
    return log.exists() and f"task {story} started {number}" in log.read_text()


def _passing(remote: Path, env: dict[str, str]) -> list[str]:
    shown = subprocess.run(
        ["git", "show", f"{BRANCH}:.ralph/feat/prd.json"],
        cwd=remote,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(story["id"] for story in json.loads(shown)["userStories"] if story["passes"])


def test_paused_as_a_whole_no_new_loop_starts_until_resumed_and_say_reaches_the_named_loop(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    env = {**ralph_env, "RALPH_TEMPORAL_HEARTBEAT": "1"}
    remote, log, worker = _setup(project, env, tmp_path, temporal_server.address)
    command = agent_cmd("steered_agent.py", str(log), str(tmp_path / "gates"), "loop")
    run = start_run(project, env, temporal_server.address, 2, "--agent-cmd", command)
    try:
        wait_for(lambda: _started(log, "S-1") and _started(log, "S-2"), timeout=60)
        unknown = ralph_in(project, env, "pause", "--story", "S-9")
        assert unknown.returncode == 1, unknown.stdout
        assert "--story S-9: no running loop of the run has it (running: S-1, S-2); nothing was sent" in unknown.stderr
        one = ralph_in(project, env, "say", "--story", "S-2", "only for two")
        assert one.returncode == 0 and one.stdout.startswith("ralph: feat story S-2: said:"), one.stderr
        wait_for(lambda: "✋ S-2: said:" in worker.output(), timeout=20)  # its worker wrote it in S-2's control.json
        assert "✋ S-1: said:" not in worker.output()

        paused = ralph_in(project, env, "pause")
        assert paused.returncode == 0 and "paused: no new loop starts" in paused.stdout, paused.stderr
        wait_for(lambda: worker.output().count(": paused:") == 2, timeout=20)  # both running loops told
        (tmp_path / "gates" / "1").touch()  # both pass their story; S-3 is ready, and must wait
        wait_for(lambda: _passing(remote, env) == ["S-1", "S-2"], timeout=60)
        shown = ralph_in(project, env, "status")
        assert "Steered:    paused by you at " in shown.stdout and " UTC (cli): no new loop starts" in shown.stdout
        assert not _started(log, "S-3")

        assert ralph_in(project, env, "resume").returncode == 0
        wait_for(lambda: _started(log, "S-3"), timeout=30)
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        assert worker.stop() == 0, worker.output()
    assert run.returncode == 0, out
    assert "✋ paused by you at " in out and "✋ resumed: loops start again" in out
    assert _passing(remote, env) == ["S-1", "S-2", "S-3"]


def test_stopped_as_a_whole_it_ends_stopped_once_its_loops_end_after_their_iteration(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    env = {**ralph_env, "RALPH_TEMPORAL_HEARTBEAT": "1"}
    _, log, worker = _setup(project, env, tmp_path, temporal_server.address)
    command = agent_cmd("steered_agent.py", str(log), str(tmp_path / "gates"))  # passes no story: loops go on
    run = start_run(project, env, temporal_server.address, 2, "--agent-cmd", command)
    try:
        wait_for(lambda: _started(log, "S-1") and _started(log, "S-2"), timeout=60)
        stopping = ralph_in(project, env, "stop")
        assert stopping.returncode == 0 and "the running loops end after their iteration" in stopping.stdout
        wait_for(lambda: worker.output().count(": stopping:") == 2, timeout=20)
        (tmp_path / "gates" / "1").touch()
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        assert worker.stop() == 0, worker.output()
    assert run.returncode == 3, out
    assert "task S-3" not in log.read_text()  # no new loop started
    assert "started 2" not in log.read_text()  # and none went on past its iteration
    after = ralph_in(project, env, "stop")
    assert after.returncode == 1 and "no run of feat is going on Temporal; nothing was sent" in after.stderr


def test_the_page_and_the_monitor_show_the_run_on_temporal_and_the_page_steers_it(
    project: Path, ralph_env: dict[str, str], tmp_path: Path, temporal_server: Any
) -> None:
    env = {**ralph_env, "RALPH_TEMPORAL_HEARTBEAT": "1"}
    remote, log, worker = _setup(project, env, tmp_path, temporal_server.address)
    command = agent_cmd("steered_agent.py", str(log), str(tmp_path / "gates"), "loop")
    try:
        started = ralph_in(
            project, env, "run", "--parallel", "2", "--temporal", temporal_server.address, "--detach",
            "--agent-cmd", command,
        )  # fmt: skip
        assert started.returncode == 0, started.stdout + started.stderr
        wait_for(lambda: _started(log, "S-1") and _started(log, "S-2"), timeout=60)
        with serving(project, env) as served:
            bearer = {"Authorization": f"Bearer {served.token}"}
            connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
            connection.request("GET", "/api/snapshot", headers=bearer)
            snapshot = json.loads(connection.getresponse().read())
            feature = snapshot["features"][0]
            assert feature["fleet"]["target"] == BRANCH, feature
            assert {loop["story"]: loop["state"] for loop in feature["loops"]}["S-1"] == "running", feature
            own = {**bearer, "Origin": served.base}
            assert post(served, {"feature": "feat", "action": "pause"}, own)[0] == 200
            wait_for(lambda: worker.output().count(": paused:") == 2, timeout=20)  # both loops told, from the page
            shown = ralph_in(project, env, "status")
            assert "Steered:    paused by you at " in shown.stdout and "UTC (web)" in shown.stdout, shown.stdout
            assert post(served, {"feature": "feat", "action": "resume"}, own)[0] == 200
        (tmp_path / "gates" / "1").touch()
        wait_for(lambda: _passing(remote, env) == ["S-1", "S-2", "S-3"], timeout=90)
        watched = ralph_in(project, env, "monitor")  # not a terminal: a line per change, until the run is over
        assert watched.returncode == 0, watched.stdout + watched.stderr
        assert "The parallel run has ended: complete" in watched.stdout, watched.stdout
        assert "Engine:     temporal: workflow ralph-" in watched.stdout
    finally:
        assert worker.stop() == 0, worker.output()
