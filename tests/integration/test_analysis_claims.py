"""Completion claims at the CLI's edge: `RALPH_COMPLETION=trust` in the real process's environment takes a claim at
its word and the run exits 0; a refused claim leaves it running to its limit, exit 1. What claims decide and record
(refused and told, no claim needed, trust, quoted promises) is tests/engine/test_analysis_claims.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json

PROMISE = "<promise>COMPLETE</promise>"


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def test_trust_from_the_environment_ends_the_run_with_exit_0_and_verify_with_exit_1(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    cmd = plan_agent(tmp_path, {"*": {"say": PROMISE + "\n"}})

    refused = ralph("run", "-n", "1", "--agent-cmd", cmd, env={"RALPH_COMPLETION": "verify"})

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"

    done = ralph("run", "-n", "5", "--no-archive", "--agent-cmd", cmd, env={"RALPH_COMPLETION": "trust"})

    assert done.returncode == 0, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["iteration"]) == ("complete", 2)
