"""SIGINT / SIGTERM during an iteration: the agent tree is stopped, records saved, exit 130."""

from __future__ import annotations

import shlex
import signal

import psutil
import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries, read_pid, wait_dead, wait_until


@pytest.mark.parametrize(
    ("signum", "setsid"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGINT", "SIGTERM", "SIGINT-grandchild-own-session"],
)
def test_signal_stops_the_run_and_saves_records(feature, background, tmp_path, signum, setsid):
    pidfile = tmp_path / "grandchild.pid"
    agent = agent_cmd("hang_with_grandchild.py", str(pidfile), *(["--setsid"] if setsid else []))
    proc = background.ralph("run", "-n", "3", "--agent-cmd", agent)
    started = wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    assert started and proc.poll() is None, proc.communicate(timeout=30) if proc.poll() is not None else "no start"
    grandchild = read_pid(pidfile)
    assert grandchild is not None
    background.adopt_tree(proc.pid)
    descendants = [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
    assert grandchild in descendants

    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stdout + stderr
    assert "To continue, run: ralph run" in stdout
    resume = next(line for line in stdout.splitlines() if line.startswith("To continue, run: "))
    words = shlex.split(resume.removeprefix("To continue, run: "))
    assert words[:2] == ["ralph", "run"], resume
    assert "feat" in words[2:], resume
    # seed 004: the final summary of what was done so far, before the command to continue
    assert "FINAL SUMMARY" in stdout and stdout.index("FINAL SUMMARY") < stdout.index("To continue, run:")
    assert "Outcomes:        1 interrupted" in stdout
    for pid in descendants:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived the {signum.name}"

    status = read_json(feature / "status.json")
    assert status["status"] == "interrupted"
    assert status["exitReason"] == "interrupted"
    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 1
    assert entry_fields(entries[0])["Status"] == "interrupted"
    # Only one iteration was started: the loop did not go on after the signal.
    assert not (feature / "logs" / "iteration-2.log").exists()
    assert read_json(feature / "state.json")["last_outcome"]["status"] == "interrupted"
