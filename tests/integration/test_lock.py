"""One `ralph run` per feature at a time; a crashed holder does not block the next run."""

from __future__ import annotations

import json
import signal

import psutil

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import read_pid, wait_dead, wait_until


def test_second_run_is_refused_and_a_crashed_holder_frees_the_lock(feature, ralph, background, tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    first = background.ralph("run", "-n", "1", "--agent-cmd", agent_cmd("hang_with_grandchild.py", str(pidfile)))
    started = wait_until(lambda: read_pid(pidfile) is not None or first.poll() is not None)
    assert started and first.poll() is None, first.communicate(timeout=30) if first.poll() is not None else "no start"
    background.adopt_tree(first.pid)
    # the agent's "working..." is in status.json within a second (the trailing write): the holder's last write
    assert wait_until(lambda: json.loads((feature / "status.json").read_text()).get("lastOutputAt") is not None)
    status_before = (feature / "status.json").read_bytes()

    # While the first run works, `ralph status` sees it alive.
    report = ralph("status", "--json")
    assert report.returncode == 0, report.stderr
    live = json.loads(report.stdout)
    assert live["alive"] is True
    assert live["pid"] == first.pid
    assert live["status"] == "running"

    # A second run on the same feature is refused, naming the holder, and touches nothing.
    second = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "second"), timeout=60)
    assert second.returncode == 1, second.stdout + second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert str(first.pid) in lines[0]
    assert not (feature / "logs" / "iteration-2.log").exists()
    assert (feature / "status.json").read_bytes() == status_before

    # Archiving would pull the folder from under the run: refused too.
    archive = ralph("archive", "-f", "feat", timeout=60)
    assert archive.returncode == 1, archive.stdout + archive.stderr
    assert str(first.pid) in archive.stderr
    assert (feature / "prd.json").is_file()
    assert not (feature.parent / "archive").exists()

    # The holder crashes (SIGKILL: no cleanup at all).
    agents = psutil.Process(first.pid).children(recursive=True)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    for agent in agents:  # the orphaned agent tree is the test's to clean up, not the lock's concern
        agent.kill()
        assert wait_dead(agent.pid)

    after_crash = json.loads(ralph("status", "--json").stdout)
    assert after_crash["alive"] is False
    assert after_crash["status"] != "running"

    # The next run takes the lock and works.
    third = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "third"), timeout=60)
    assert "already running" not in third.stderr
    assert third.returncode == 1, third.stdout + third.stderr  # 1 = max iterations, after a real iteration
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["pid"] != first.pid
    assert "third" in (feature / "logs" / "iteration-2.log").read_text()


def test_lock_is_released_after_a_normal_run(feature, ralph):
    cmd = agent_cmd("say.py", "hi")
    assert ralph("run", "-n", "1", "--agent-cmd", cmd).returncode == 1

    again = ralph("run", "-n", "1", "--agent-cmd", cmd)

    assert again.returncode == 1, again.stderr
    assert "already running" not in again.stderr
    assert (feature / "logs" / "iteration-2.log").is_file()
    assert json.loads(ralph("status", "--json").stdout)["alive"] is False
