"""The per-account rate limit end to end: real `ralph run` processes sharing $RALPH_HOME/calls/<account>.json.

No test waits for a slot to free (that takes an hour): a loop at the limit is seen waiting in status.json,
then interrupted. The in-process tests with a fake clock (test_loop_waits.py) cover the wait itself.
"""

from __future__ import annotations

import json
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, wait_until

WORKER = agent_cmd("story_agent.py")  # finishes one story per iteration: progress, no failures


def ledger(ralph_env: dict[str, str], account: str = "command") -> Path:
    return Path(ralph_env["RALPH_HOME"]) / "calls" / f"{account}.json"


def starts(path: Path) -> list[datetime]:
    return [datetime.fromisoformat(item) for item in read_json(path)["starts"]]


def parse_z(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def second_feature(project: Path, ralph: RalphRunner, name: str = "other") -> Path:
    done = ralph("init", name)
    assert done.returncode == 0, done.stderr
    folder = project / ".ralph" / name
    write_prd(folder, 3)
    return folder


def test_every_agent_start_is_recorded_and_shared_by_the_account(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    before = datetime.now(UTC)

    done = ralph("run", "-f", "feat", "-r", "3", "-n", "3", "--no-archive", "--agent-cmd", WORKER)

    assert done.returncode == 0, done.stdout + done.stderr  # 3 stories, 3 iterations: complete
    path = ledger(ralph_env)
    recorded = starts(path)
    assert len(recorded) == 3
    assert all(before - timedelta(seconds=5) <= moment <= datetime.now(UTC) for moment in recorded)
    status = read_json(feature / "status.json")
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (3, 3)
    # The oldest start leaves the window an hour after it was made.
    assert abs(parse_z(status["rateLimitResetsAt"]) - (min(recorded) + timedelta(hours=1))) < timedelta(seconds=2)

    # Another loop of the same account (another feature) sees the same ledger, and adds to it.
    other = second_feature(project, ralph)
    dry = ralph("run", "-f", "other", "-r", "3", "--dry-run", "--agent-cmd", WORKER)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"ledger {path}" in dry.stdout
    assert len(starts(path)) == 3  # a dry run takes no slot

    second = ralph("run", "-f", "other", "-r", "5", "-n", "1", "--agent-cmd", WORKER)

    assert second.returncode == 1, second.stdout + second.stderr
    status = read_json(other / "status.json")
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (4, 5)
    assert len(starts(path)) == 4


def test_the_account_names_the_ledger(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nrate_limit:\n  account: team@example.com\n")

    done = ralph("run", "-n", "1", "--agent-cmd", WORKER)

    assert done.returncode == 1, done.stdout + done.stderr
    assert len(starts(ledger(ralph_env, "team_example.com"))) == 1
    assert not ledger(ralph_env).exists()


def test_a_loop_at_the_limit_waits_instead_of_starting_an_agent(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], background: Background
) -> None:
    first = ralph("run", "-f", "feat", "-r", "2", "-n", "2", "--agent-cmd", WORKER)
    assert first.returncode == 1, first.stdout + first.stderr
    path = ledger(ralph_env)
    full = path.read_bytes()
    second_feature(project, ralph)

    proc = background.ralph("run", "-f", "other", "-r", "2", "-n", "1", "--agent-cmd", WORKER)
    status_path = project / ".ralph" / "other" / "status.json"

    def waiting() -> bool:
        try:
            return read_json(status_path).get("waiting") is not None
        except (FileNotFoundError, json.JSONDecodeError):
            return False

    assert wait_until(lambda: waiting() or proc.poll() is not None), "no wait"
    assert proc.poll() is None, proc.communicate(timeout=30)
    status = read_json(status_path)
    assert status["waiting"]["kind"] == "rate limit"
    assert "2/2 agent calls in the last hour" in status["waiting"]["message"]
    assert parse_z(status["waiting"]["until"]) > datetime.now(UTC) + timedelta(minutes=50)
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (2, 2)

    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stdout + stderr
    assert not (project / ".ralph" / "other" / "logs" / "iteration-1.log").exists()
    assert path.read_bytes() == full  # no start was taken


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
