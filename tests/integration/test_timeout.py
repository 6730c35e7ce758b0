"""-t: an agent that hangs is stopped with everything it started, and the iteration counts as failed."""

from __future__ import annotations

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, pid_alive, progress_entries, read_pid, wait_dead


@pytest.mark.parametrize("setsid", [False, True], ids=["same-group", "own-session"])
def test_timeout_kills_agent_and_grandchild(feature, ralph, background, tmp_path, setsid):
    pidfile = tmp_path / "grandchild.pid"
    args = [str(pidfile), "--setsid"] if setsid else [str(pidfile)]

    done = ralph("run", "-n", "1", "-t", "2s", "--agent-cmd", agent_cmd("hang_with_grandchild.py", *args), timeout=90)

    grandchild = read_pid(pidfile)
    assert grandchild is not None, "the agent never started its grandchild"
    if pid_alive(grandchild):
        background.adopt(grandchild)  # make sure teardown kills it if ralph did not
    assert done.returncode == 1, done.stdout + done.stderr
    assert wait_dead(grandchild), f"grandchild {grandchild} survived the timeout"

    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 1
    fields = entry_fields(entries[0])
    assert fields["Status"] == "failed"
    assert "timed out" in fields["Note"], entries[0]
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert "working..." in (feature / "logs" / "iteration-1.log").read_text()
