"""An agent that does nothing: the loop stops at the iteration limit with exit 1."""

from __future__ import annotations

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries


@pytest.mark.parametrize(
    "limit_args",
    [("-n", "2"), ("feat", "2"), ("-f", "feat", "--max-iterations", "2")],
    ids=["flag", "positional", "long-flag"],
)
def test_stops_after_exactly_the_limit(feature, ralph, limit_args):
    done = ralph("run", *limit_args, "--agent-cmd", agent_cmd("say.py", "nothing to do"))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["iteration"] == 2
    assert status["storiesComplete"] == 0
    logs = feature / "logs"
    assert (logs / "iteration-1.log").is_file()
    assert (logs / "iteration-2.log").is_file()
    assert not (logs / "iteration-3.log").exists()
    assert "nothing to do" in (logs / "iteration-1.log").read_text()
    entries = progress_entries((feature / "progress.txt").read_text())
    assert [entry_fields(entry)["Iteration"] for entry in entries] == ["1", "2"]
    assert all(entry_fields(entry)["Status"] != "complete" for entry in entries)
    # The same open story is worked again, not skipped.
    assert [entry_fields(entry)["Story"] for entry in entries] == ["S-1 - Story 1", "S-1 - Story 1"]


def test_iterations_continue_numbering_across_runs(feature, ralph):
    cmd = agent_cmd("say.py", "nothing to do")
    assert ralph("run", "-n", "1", "--agent-cmd", cmd).returncode == 1

    done = ralph("run", "-n", "1", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert (feature / "logs" / "iteration-2.log").is_file()
    entries = progress_entries((feature / "progress.txt").read_text())
    assert [entry_fields(entry)["Iteration"] for entry in entries] == ["1", "2"]
