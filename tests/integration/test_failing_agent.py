"""An agent that exits non-zero: each iteration is recorded as failed, and the loop goes on."""

from __future__ import annotations

from tests.backends.test_error_line import NODE_ENOSPC
from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries


def test_failed_iterations_are_recorded_and_the_loop_continues(feature, ralph):
    done = ralph("run", "-n", "2", "--agent-cmd", agent_cmd("say.py", "trying", "--exit", "3"))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["iteration"] == 2
    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 2
    for entry in entries:
        fields = entry_fields(entry)
        assert fields["Status"] == "failed", entry
        assert "3" in fields["Note"], entry
        assert "exit" in fields["Note"].lower(), entry
        assert "failing with 3" in fields["Note"], entry
    assert "[stderr] failing with 3" in (feature / "logs" / "iteration-1.log").read_text()
    assert read_json(feature / "state.json")["last_outcome"]["exit_code"] == 3


def test_failing_story_is_retried_with_the_reason_noted(feature, ralph, tmp_path):
    record = tmp_path / "record.jsonl"
    cmd = agent_cmd("story_agent.py", "--fail-on", "S-1", "--record", str(record))

    done = ralph("run", "-n", "2", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    entries = [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]
    assert [entry["Status"] for entry in entries] == ["failed", "failed"]
    assert all("cannot do S-1" in entry["Note"] for entry in entries)
    assert [line.count('"task": "S-1"') for line in record.read_text().splitlines()] == [1, 1]


def test_a_crash_is_told_by_its_error_line_not_its_last_line(feature, ralph, tmp_path):
    """Node prints its version after the error: the reason on every surface is the ENOSPC line."""
    crash = tmp_path / "stderr.txt"
    crash.write_text(NODE_ENOSPC)

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("crash_with.py", str(crash)))

    assert done.returncode == 1, done.stdout + done.stderr
    enospc = "Error: ENOSPC: no space left on device, write"
    iteration_line = next(line for line in done.stdout.splitlines() if "exit code 1" in line)
    assert enospc in iteration_line and "Node.js" not in iteration_line
    (entry,) = progress_entries((feature / "progress.txt").read_text())
    assert enospc in entry_fields(entry)["Note"]
    assert read_json(feature / "state.json")["last_outcome"]["error"] == f"exit code 1: {enospc}"
    shown = ralph("status").stdout
    assert f"exit code 1: {enospc}" in shown and "Node.js" not in shown
