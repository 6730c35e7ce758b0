"""The iteration limit at the CLI's edge: each spelling of it reaches the loop, which stops there with exit 1.
What the loop records at the limit is tests/engine/test_max_iterations.py's, in-process."""

from __future__ import annotations

import pytest

from tests.conftest import agent_cmd, read_json


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
    assert (feature / "logs" / "iteration-2.log").is_file()
    assert not (feature / "logs" / "iteration-3.log").exists()
