"""The per-account rate limit at the CLI's edge: a real `ralph run` records its agents' starts in the ledger under its
$RALPH_HOME and exits 0 when done; a corrupt ledger is one error line. What the limit decides and records (the ledger
shared by an account's loops, the account's name, a loop waiting at the limit) is tests/engine/test_rate_limit.py's,
and test_loop_waits.py covers the wait itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error

WORKER = agent_cmd("story_agent.py")  # finishes one story per iteration: progress, no failures


def ledger(ralph_env: dict[str, str], account: str = "command") -> Path:
    return Path(ralph_env["RALPH_HOME"]) / "calls" / f"{account}.json"


def starts(path: Path) -> list[datetime]:
    return [datetime.fromisoformat(item) for item in read_json(path)["starts"]]


def test_every_agent_start_is_recorded_in_the_accounts_ledger(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    before = datetime.now(UTC)

    done = ralph("run", "-f", "feat", "-r", "3", "-n", "3", "--no-archive", "--agent-cmd", WORKER)

    assert done.returncode == 0, done.stdout + done.stderr  # 3 stories, 3 iterations: complete
    recorded = starts(ledger(ralph_env))
    assert len(recorded) == 3
    assert all(before - timedelta(seconds=5) <= moment <= datetime.now(UTC) for moment in recorded)
    status = read_json(feature / "status.json")
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (3, 3)


def test_a_corrupt_ledger_is_a_one_line_error_and_left_alone(
    feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    path = ledger(ralph_env)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"schema_version": 1, "starts": ["yesterday"')

    done = ralph("run", "-n", "1", "--agent-cmd", WORKER)

    assert_one_line_error(done, str(path), "call ledger")
    assert path.read_bytes() == b'{"schema_version": 1, "starts": ["yesterday"'
    assert not (feature / "logs" / "iteration-1.log").exists()
    # Nothing claims a run is going on.
    status = feature / "status.json"
    assert not status.exists() or read_json(status)["status"] != "running"
