"""The engine driven in-process through its execution seam (core/runner.py): real runs of the Claude Code CLI,
recorded in tests/fixtures/claude/runs, played back by the replay runner into the real Claude backend's parser;
the task file, git and the record files are real, and no process is started."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import FakeClock
from ralphloop.core.events import AgentOutput, AgentStarted, IterationFinished
from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.loop import LoopOutcome, run_loop
from ralphloop.processes.replay import Recording, ReplayRunner
from ralphloop.project.paths import RALPH_DIR
from ralphloop.start.build import RunRequest, build_run
from ralphloop.workspace.gitignore import ensure_gitignore
from tests.conftest import read_json, write_prd
from tests.policies import tuned

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "runs"
OK = RUNS / "claude_mock_tool_streamjson"  # exit 0, result "ok", 1,734 input and 57 output tokens, $0.015057
USAGE_LIMIT = RUNS / "claude_mock_oauth_unified_rejected_streamjson"  # the 5-hour limit, exit 1
AUTH = RUNS / "claude_mock_auth_401_streamjson"  # Invalid API key, exit 1


def feature(project: Path, count: int = 2) -> Path:
    stories = [
        {"id": f"S-{n}", "title": f"Story {n}", "acceptanceCriteria": [f"c{n}"], "priority": n, "passes": False}
        for n in range(1, count + 1)
    ]
    folder = write_prd(project / RALPH_DIR / "feat", stories)
    ensure_gitignore(str(project / RALPH_DIR))
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "add feat"], cwd=project, check=True)
    return folder


def passing(prd: Path, *done: str) -> dict[str, str | None]:
    """The edit an agent makes when it passes `done`: prd.json with those stories' `passes` true."""
    body = json.loads(prd.read_text())
    for story in body["userStories"]:
        story["passes"] = story["passes"] or story["id"] in done
    return {os.path.relpath(prd, prd.parents[2]): json.dumps(body, indent=2) + "\n"}


def replay(
    project: Path,
    recordings: list[Recording],
    usage_action: str | None = None,
    clock: FakeClock | None = None,
    **policy: Any,
) -> tuple[LoopOutcome, list[object], ReplayRunner]:
    """A run of feature `feat` with the Claude backend, built as `ralph run` builds it, its agent played back."""
    events: list[object] = []
    runner = ReplayRunner(recordings)
    cancel = CancelToken()
    request = RunRequest(feature="feat", flags={"agent": ("claude", "--agent")}, archive=False)
    clock = clock or FakeClock()
    built = build_run(str(project), request, clock=clock, sinks=[events.append], cancel=cancel, runner=runner)
    if usage_action is not None:
        policy["usage"] = replace(built.run.policy.usage, action=usage_action)
    engine = replace(built.run, policy=tuned(built.run.policy, **policy))
    try:
        return run_loop(engine), events, runner
    finally:
        cancel.close()


def test_recorded_claude_runs_work_a_feature_to_complete(project: Path, home: Path) -> None:
    prd = feature(project)
    first, second = Recording.from_folder(str(OK), passing(prd, "S-1")), Recording.from_folder(str(OK))
    second = replace(second, edits=passing(prd, "S-1", "S-2"))

    outcome, events, runner = replay(project, [first, second])

    assert outcome.reason is ExitReason.COMPLETE
    assert runner.left == 0
    assert [launch.command.argv[0] for launch in runner.launches] == ["/bin/true", "/bin/true"]
    assert all("--output-format" in launch.command.argv for launch in runner.launches)
    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [(record.status, record.task_id) for record in finished] == [("complete", "S-1"), ("complete", "S-2")]
    # the backend's parser read the recorded stream: its tokens and cost are the run's
    assert [record.result.usage.input_tokens for record in finished if record.result.usage] == [1734, 1734]
    assert finished[-1].tally.cost_usd == pytest.approx(2 * 0.015057)
    assert [event.pid for event in events if isinstance(event, AgentStarted)] == [0, 0]
    assert any(isinstance(event, AgentOutput) for event in events)
    # the recorded output is the iteration's log, and the work is committed
    log = (prd.parent / "logs" / "iteration-1.log").read_bytes()
    assert log.startswith(OK.joinpath("stdout").read_bytes()[:200])
    head = subprocess.run(["git", "show", "HEAD:.ralph/feat/prd.json"], cwd=project, capture_output=True, check=True)
    assert all(story["passes"] for story in json.loads(head.stdout)["userStories"])
    assert read_json(prd.parent / "status.json")["status"] == "complete"


def test_a_recorded_usage_limit_is_not_counted_and_stops_the_run_when_told_to(project: Path, home: Path) -> None:
    feature(project)
    limited = Recording.from_folder(str(USAGE_LIMIT))

    outcome, events, _ = replay(project, [limited], usage_action="exit")

    assert outcome.reason is ExitReason.USAGE_LIMIT
    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [(record.status, record.counted) for record in finished] == [("usage-limit", False)]
    assert finished[0].result.usage_limit is not None
    assert "5-hour limit" in finished[0].result.usage_limit.message


def test_a_recorded_auth_failure_stops_the_loop_and_keeps_the_task_file(project: Path, home: Path) -> None:
    prd = feature(project)
    before = prd.read_bytes()

    outcome, events, runner = replay(project, [Recording.from_folder(str(AUTH)), Recording.from_folder(str(OK))])

    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert len(finished) == 1 and runner.left == 1  # the loop did not call the agent again
    assert outcome.reason is not ExitReason.COMPLETE
    assert "Invalid API key" in (finished[0].result.error or "")
    assert prd.read_bytes() == before


def test_a_launch_past_the_last_recording_is_a_failed_start(project: Path, home: Path) -> None:
    feature(project, count=1)

    outcome, events, runner = replay(project, [], max_iterations=1)

    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [record.status for record in finished] == ["failed"]
    assert "no recording left" in (finished[0].result.error or "")
    assert outcome.reason is not ExitReason.COMPLETE
    assert len(runner.launches) == 1


CLAIMS_DONE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "claude_mock_ok_streamjson.jsonl"
RATE_LIMITED = RUNS / "claude_mock_rate_limit_429_streamjson"  # 429 without a usage limit: a short rate limit


def test_a_completion_claim_the_task_file_refutes_is_refused_and_told_to_the_next_prompt(
    project: Path, home: Path
) -> None:
    feature(project)
    claim = Recording(CLAIMS_DONE.read_bytes())  # "<promise>COMPLETE</promise>", and prd.json left as it was

    outcome, events, runner = replay(project, [claim, claim], max_iterations=2)

    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [record.status for record in finished] == ["refused", "refused"]
    assert not any(record.success for record in finished)
    assert outcome.reason is not ExitReason.COMPLETE
    # the second prompt says the claim was refused
    second = runner.launches[1].command.stdin.decode()
    assert "COMPLETE" in second and "refused" in second.lower()


def test_a_short_rate_limit_is_not_counted_and_waited_out_before_the_next_call(project: Path, home: Path) -> None:
    prd = feature(project, count=1)
    limited, done = Recording.from_folder(str(RATE_LIMITED)), Recording.from_folder(str(OK), passing(prd, "S-1"))

    clock = FakeClock()
    outcome, events, runner = replay(project, [limited, done], clock=clock)

    assert outcome.reason is ExitReason.COMPLETE
    assert sum(clock.slept) >= 5.0  # seed 004's first backoff, waited on the run's clock
    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [(record.status, record.counted) for record in finished] == [("api-error", False), ("complete", True)]
    assert runner.left == 0
    assert finished[-1].tally.counted == 1  # the rate-limited call is not one of the run's iterations
