"""The per-account rate limit, in-process: runs built as `ralph run` builds them, their agents played back
(harness.py), sharing $RALPH_HOME/calls/<account>.json as separate `ralph run` processes would.

The clock is a fake one that starts now: a loop at the limit is seen waiting (status.json, while the wait lasts),
then stopped as Ctrl+C stops it (the run's cancel token). The CLI's side (a real run's ledger under its RALPH_HOME,
a corrupt ledger's error line) is tests/integration/test_rate_limit_e2e.py's.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ralphloop.cli.run_cmd import show_dry_run
from ralphloop.core.cancel import CancelToken
from ralphloop.core.events import Waiting
from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json, write_prd
from tests.engine.harness import Turn, Turns, build, ralph, run

# tests/agents/story_agent.py: finishes one story per iteration: progress, no failures
WORKER = Turn(write={"work-{task}.txt": "done {task}\n"}, passes=["{task}"], commit="feat: {task}", say="finished\n")


def rate(calls: int) -> dict[str, tuple[Any, str]]:
    return {"rate_limit_per_hour": (str(calls), "-r/--rate-limit")}


def ledger(home: Path, account: str = "command") -> Path:
    return home / "calls" / f"{account}.json"


def starts(path: Path) -> list[datetime]:
    return [datetime.fromisoformat(item) for item in read_json(path)["starts"]]


def parse_z(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def second_feature(project: Path, name: str = "other") -> Path:
    done = ralph("init", name)
    assert done.code == 0, done.err
    folder = project / ".ralph" / name
    write_prd(folder, 3)
    return folder


def test_every_agent_start_is_recorded_and_shared_by_the_account(project: Path, feature: Path, home: Path) -> None:
    before = datetime.now(UTC)

    done = run(project, Turns(then=WORKER), n=3, flags=rate(3))

    assert done.outcome.reason is ExitReason.COMPLETE  # 3 stories, 3 iterations: complete
    path = ledger(home)
    recorded = starts(path)
    assert len(recorded) == 3
    assert all(before - timedelta(seconds=5) <= moment <= datetime.now(UTC) for moment in recorded)
    status = read_json(feature / "status.json")
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (3, 3)
    # The oldest start leaves the window an hour after it was made.
    assert abs(parse_z(status["rateLimitResetsAt"]) - (min(recorded) + timedelta(hours=1))) < timedelta(seconds=2)

    # Another loop of the same account (another feature) sees the same ledger, and adds to it.
    other = second_feature(project)
    dry, _, _ = build(project, Turns(), feature="other", flags=rate(3), dry_run=True)
    shown = io.StringIO()
    with redirect_stdout(shown):
        assert show_dry_run(dry) == 0  # what `ralph run --dry-run` prints
    assert f"ledger {path}" in shown.getvalue()
    assert len(starts(path)) == 3  # a dry run takes no slot

    second = run(project, Turns(then=WORKER), feature="other", n=1, flags=rate(5))

    assert second.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(other / "status.json")
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (4, 5)
    assert len(starts(path)) == 4


def test_the_account_names_the_ledger(project: Path, feature: Path, home: Path) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nrate_limit:\n  account: team@example.com\n")

    done = run(project, Turns(then=WORKER), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert len(starts(ledger(home, "team_example.com"))) == 1
    assert not ledger(home).exists()


def test_a_loop_at_the_limit_waits_instead_of_starting_an_agent(project: Path, feature: Path, home: Path) -> None:
    first = run(project, Turns(then=WORKER), n=2, flags=rate(2))
    assert first.outcome.reason is ExitReason.MAX_ITERATIONS
    path = ledger(home)
    full = path.read_bytes()
    second_feature(project)
    status_path = project / ".ralph" / "other" / "status.json"
    seen: list[dict[str, Any]] = []
    cancel = CancelToken()

    def at_the_wait(event: object) -> None:
        """What `ralph status` reads while the loop waits; then a Ctrl+C."""
        if isinstance(event, Waiting) and event.first:
            seen.append(read_json(status_path))
            cancel.set()

    agent = Turns(then=WORKER)
    done = run(project, agent, feature="other", n=1, flags=rate(2), sinks=[at_the_wait], cancel=cancel)

    assert done.outcome.reason is ExitReason.INTERRUPTED and done.outcome.reason.exit_code == 130
    assert agent.launches == []
    [status] = seen
    assert status["waiting"]["kind"] == "rate limit"
    assert "2/2 agent calls in the last hour" in status["waiting"]["message"]
    assert parse_z(status["waiting"]["until"]) > datetime.now(UTC) + timedelta(minutes=50)
    assert (status["apiCallsUsed"], status["apiCallsLimit"]) == (2, 2)
    assert not (project / ".ralph" / "other" / "logs" / "iteration-1.log").exists()
    assert path.read_bytes() == full  # no start was taken
