"""An agent's API failing, at the CLI's edge: the real `ralph run` and a real agent process.

What each failure is taken for (a rate limit or a 5xx retried after the backoff and not counted, the plan's usage
limit, an agent merely writing about API errors) is tests/engine/test_api_error_classes.py's, in-process. Here: an
agent on the API itself that ends on the API's error envelope on its stderr (what the process runner keeps of it),
retried, and the retry said on the screen. Backoff waits are zero (`backoff.initial_seconds: 0`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.test_claude_backend import entries

RATE_ENVELOPE = (
    '{"type":"error","error":{"type":"rate_limit_error",'
    '"message":"Number of request tokens has exceeded your per-minute rate limit"}}'
)


def test_an_api_rate_limit_on_a_real_agents_stderr_is_retried_after_the_backoff(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nbackoff:\n  initial_seconds: 0\n")
    failing = {"write": {"partial.txt": "started\n"}, "say": "calling the model", "say_err": RATE_ENVELOPE, "exit": 1}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"1": failing, "*": {"pass": ["S-1", "S-2", "S-3"], "say": "all done"}}))

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("step_agent.py", str(plan)))

    assert done.returncode == 0, done.stdout + done.stderr
    logged = entries(feature)
    assert [entry["Status"] for entry in logged] == ["api-error", "complete"], logged
    assert "rate-limited" in logged[0]["Note"] and "not the usage limit" in logged[0]["Note"], logged[0]
    assert "retrying in 0s (attempt 1/10)" in done.stdout
    assert not (project / "partial.txt").exists()  # the call's half-done work was saved and undone
