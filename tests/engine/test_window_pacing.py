"""The loop paced against the user's caps on usage windows (issue 34), in-process through the execution seam: a real
Claude Code CLI run (2.1.329 against a loopback API, reporting its account's unified windows) played back into the
real backend, its 5-hour share set per call; the task file, git, the book of windows and the records are real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import FakeClock
from ralphloop.core.events import IterationFinished, LoopEnded, Waiting
from ralphloop.core.exitcodes import ExitReason
from ralphloop.engine.loop import LoopOutcome, run_loop
from ralphloop.engine.run import Ask
from ralphloop.processes.replay import Recording, ReplayRunner
from ralphloop.start.build import RunRequest, build_run
from tests.conftest import read_json
from tests.engine.test_replay_runner import feature, passing

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "runs"
RUN = RUNS / "claude_mock_oauth_unified_allowed_streamjson"
START = datetime(2027, 1, 1, tzinfo=UTC)
RESET = datetime(2027, 1, 1, 2, tzinfo=UTC)  # the 5-hour window's, in the capture


def call(five_hour: float, edits: dict[str, str | None] | None = None, *, years: int = 0) -> Recording:
    """The captured run, its 5-hour window `five_hour` used (and both resets `years` later: what `ralph status`
    reads against the real clock must not have reset)."""
    recorded = Recording.from_folder(str(RUN), edits)
    stdout = recorded.stdout.replace(b'"utilization":0.3', f'"utilization":{five_hour}'.encode())
    for reset in (b"1798768800", b"1799280000"):
        stdout = stdout.replace(reset, str(int(reset) + years * 366 * 86400).encode())
    return replace(recorded, stdout=stdout)


def paced(
    project: Path,
    recordings: list[Recording],
    clock: FakeClock,
    policy: str | None,
    caps: list[str] | None = None,
    start_at: str | None = None,
    more: dict[str, tuple[Any, str]] | None = None,
    ask: Ask | None = None,
) -> tuple[LoopOutcome, list[object], ReplayRunner]:
    """A run of feature `feat` as `ralph run` builds it, `recordings` played back: `--on-usage-limit policy` (None:
    the default), `--max-window caps`, `more` flags; `ask` answers as a user at a terminal would."""
    events: list[object] = []
    runner = ReplayRunner(recordings)
    cancel = CancelToken()
    flags: dict[str, tuple[Any, str]] = {
        "agent": ("claude", "--agent"),
        "usage_windows": (caps or ["five_hour=50%"], "--max-window"),
        **({"usage_policy": (policy, "--on-usage-limit")} if policy else {}),
        **(more or {}),
    }
    request = RunRequest(feature="feat", flags=flags, archive=False, start_at=start_at, terminal=ask is not None)
    built = build_run(str(project), request, clock=clock, sinks=[events.append], cancel=cancel, runner=runner, ask=ask)
    try:
        return run_loop(built.run), events, runner
    finally:
        cancel.close()


def test_the_loop_stops_with_exit_2_after_the_call_that_reported_the_cap(project: Path, home: Path) -> None:
    prd = feature(project, count=3)
    clock = FakeClock(start=START)
    calls = [call(0.3, passing(prd, "S-1")), call(0.55, passing(prd, "S-1", "S-2")), call(0.6)]

    outcome, events, runner = paced(project, calls, clock, "exit")

    assert (outcome.reason, outcome.reason.exit_code, outcome.iterations) == (ExitReason.USAGE_WINDOW, 2, 2)
    assert runner.left == 1  # no third call: the cap held it before it started
    assert "five_hour" in outcome.message and "55% used" in outcome.message and "cap of 50%" in outcome.message
    assert "not the vendor's limit" in outcome.message
    ended = next(event for event in events if isinstance(event, LoopEnded))
    assert "--max-window" in ended.guidance and "ralph run" in ended.guidance
    status = read_json(prd.parent / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_window")
    book = json.loads((home / "agent-limits.json").read_text())
    (account,) = book["windows"]
    assert book["windows"][account]["five_hour"] == {
        "utilization": 0.55,
        "resetsAt": "2027-01-01T02:00:00Z",
        "readAt": "2027-01-01T00:00:00Z",
    }
    # a restarted ralph is held by the same book, before any call
    again, _, rerun = paced(project, [call(0.6)], clock, "exit")
    assert again.reason is ExitReason.USAGE_WINDOW and rerun.launches == []


def test_with_wait_the_loop_waits_for_the_windows_reset_then_goes_on(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    calls = [call(0.7, passing(prd, "S-1")), call(0.1, passing(prd, "S-1", "S-2"))]

    outcome, events, runner = paced(project, calls, clock, "wait")

    assert outcome.reason is ExitReason.COMPLETE and runner.left == 0
    waits = [event for event in events if isinstance(event, Waiting) and event.kind == "usage window"]
    assert waits and waits[0].first and waits[-1].done
    assert waits[0].until == RESET + timedelta(seconds=60)  # the reset, plus usage_limit.margin_seconds
    assert "70% used" in waits[0].message
    finished = [event for event in events if isinstance(event, IterationFinished)]
    assert [record.finished_at >= RESET for record in finished] == [False, True]


def test_a_ralph_killed_during_the_wait_waits_for_the_same_instant_when_started_again(
    project: Path, home: Path
) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.9, passing(prd, "S-1"))], clock, "exit")  # the call that filled the window
    clock.advance(timedelta(minutes=30).total_seconds())  # the first ralph was killed; the user starts it again

    outcome, events, runner = paced(project, [call(0.1, passing(prd, "S-1", "S-2"))], clock, "wait")

    waits = [event for event in events if isinstance(event, Waiting) and event.kind == "usage window"]
    assert waits[0].until == RESET + timedelta(seconds=60)
    assert outcome.reason is ExitReason.COMPLETE and len(runner.launches) == 1


def test_a_run_under_its_cap_is_not_held(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    calls = [call(0.2, passing(prd, "S-1")), call(0.4, passing(prd, "S-1", "S-2"))]
    outcome, events, _ = paced(project, calls, clock, "exit", caps=["five_hour=50%", "seven_day=0.5"])
    assert outcome.reason is ExitReason.COMPLETE
    assert not [event for event in events if isinstance(event, Waiting)]


def test_start_at_reset_waits_for_the_capped_windows_reset_before_the_first_call(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.3, passing(prd, "S-1"))], clock, "exit", start_at=None)  # the book learns the windows
    (project / ".ralph" / "feat" / "state.json").unlink(missing_ok=True)

    outcome, events, runner = paced(project, [call(0.1, passing(prd, "S-1", "S-2"))], clock, "exit", start_at="reset")

    starts = [event for event in events if isinstance(event, Waiting) and event.kind == "start"]
    assert starts and starts[0].until == RESET and "--start-at reset" in starts[0].message
    assert outcome.reason is ExitReason.COMPLETE and len(runner.launches) == 1
    assert not (project / ".ralph" / "feat" / ".start_at.json").exists()  # spent once the run ended


def test_status_shows_each_window_of_the_runs_account_with_its_cap(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.55, passing(prd, "S-1"), years=100)], clock, "exit", caps=["five_hour=50%", "all=90%"])

    shown = subprocess.run(
        [sys.executable, "-m", "ralphloop", "status", "--json"], cwd=project, capture_output=True, text=True, check=True
    )
    windows = json.loads(shown.stdout)["windows"]
    account = windows[0]["account"]
    assert account.startswith("claude/")
    assert windows == [
        {
            "agent": "claude",
            "account": account,
            "window": "five_hour",
            "utilization": 0.55,
            "resetsAt": "2127-03-18T02:00:00Z",
            "readAt": "2027-01-01T00:00:00Z",
            "cap": 0.5,
        },
        {
            "agent": "claude",
            "account": account,
            "window": "seven_day",
            "utilization": 0.1,
            "resetsAt": "2127-03-24T00:00:00Z",
            "readAt": "2027-01-01T00:00:00Z",
            "cap": 0.9,
        },
    ]
    text = subprocess.run(
        [sys.executable, "-m", "ralphloop", "status"],
        cwd=project,
        env={**os.environ, "TZ": "UTC"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Window:     claude 5-hour: 55% used, past your 50% cap · resets 2127-03-18 02:00" in text
    assert "Window:     claude weekly: 10% used of your 90% cap" in text


def test_the_report_gives_each_storys_share_of_each_window_and_charts_them_with_the_cap(
    project: Path, home: Path, tmp_path: Path
) -> None:
    prd = feature(project, count=3)
    clock = FakeClock(start=START)
    calls = [
        call(0.3, passing(prd, "S-1")),  # the account's first reading: nothing to compare it with
        call(0.42, passing(prd, "S-1", "S-2")),
        call(0.45, passing(prd, "S-1", "S-2", "S-3")),
    ]
    outcome, _, _ = paced(project, calls, clock, "exit", caps=["five_hour=90%"])
    assert outcome.reason is ExitReason.COMPLETE

    def report(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "ralphloop", "report", *args],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    stories = {story["id"]: story["windows"] for story in json.loads(report("--json"))["stories"]}
    assert stories["S-1"] == [
        {"agent": "claude", "window": "five_hour", "share": 0.0, "partial": True},
        {"agent": "claude", "window": "seven_day", "share": 0.0, "partial": True},
    ]
    assert stories["S-2"][0] == {"agent": "claude", "window": "five_hour", "share": 0.12, "partial": False}
    assert stories["S-3"][0]["share"] == 0.03
    body = json.loads(report("--json"))
    (five_hour, seven_day) = body["windows"]
    assert (five_hour["window"], five_hour["cap"], [p[1] for p in five_hour["points"]]) == (
        "five_hour",
        0.9,
        [0.3, 0.42, 0.45],
    )
    assert seven_day["cap"] is None
    text = report()
    assert "S-2  claude 5-hour +12%, weekly +0%" in text and "S-1  claude 5-hour ≥ +0%, weekly ≥ +0%" in text
    page = tmp_path / "report.html"
    report("--html", str(page))
    html = page.read_text()
    assert 'id="chart-windows"' in html and "claude 5-hour cap 90%" in html


def test_the_wait_for_start_at_is_not_the_runtime_budgets(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.3, passing(prd, "S-1"))], clock, "exit")  # the book learns the 5-hour reset: 2 h away
    budget = {"max_runtime_s": ("30m", "--max-runtime")}
    outcome, _, _ = paced(project, [call(0.1, passing(prd, "S-1", "S-2"))], clock, None, start_at="reset", more=budget)
    assert outcome.reason is ExitReason.COMPLETE, outcome.message  # 2 hours waited, 30 minutes of budget
    assert clock.now() >= RESET


def test_a_calls_share_after_its_window_reset_counts_from_the_new_window(project: Path, home: Path) -> None:
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.6, passing(prd, "S-1"))], clock, "exit", caps=["five_hour=90%"])
    clock.advance(timedelta(hours=3).total_seconds())  # past the window's reset: a new window began
    later = call(0.1, passing(prd, "S-1", "S-2"))
    later = replace(later, stdout=later.stdout.replace(b"1798768800", b"1798786800"))  # the next window's reset
    paced(project, [later], clock, "exit", caps=["five_hour=90%"])
    lines = [json.loads(line) for line in (prd.parent / "ralph_metrics.jsonl").read_text().splitlines()]
    five_hour = lines[-1]["windows"]["five_hour"]
    assert five_hour == {"utilization": 0.1, "resetsAt": "2027-01-01T07:00:00Z", "before": 0.0}


def test_with_ask_the_user_chooses_at_the_cap_without_a_call(project: Path, home: Path) -> None:
    """`--on-usage-limit ask` on a terminal: the question names the window; "exit" stops (exit 2), "wait" waits for
    the reset; either way no call is made while the cap holds."""
    prd = feature(project, count=2)
    clock = FakeClock(start=START)
    paced(project, [call(0.7, passing(prd, "S-1"))], clock, "exit")
    for answer, reason, calls in (("exit", ExitReason.USAGE_WINDOW, 0), ("wait", ExitReason.COMPLETE, 1)):
        asked: list[str] = []

        def ask(question: str, timeout: float, answer: str = answer, asked: list[str] = asked) -> str:
            asked.append(question)
            return answer

        later = [call(0.1, passing(prd, "S-1", "S-2"))]
        outcome, _, runner = paced(project, later, FakeClock(start=START), "ask", ask=ask)
        assert outcome.reason is reason and len(runner.launches) == calls
        assert len(asked) == 1 and "5-hour window is 70% used" in asked[0] and "Wait or exit?" in asked[0]
