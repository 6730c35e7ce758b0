"""The loop's waits, in-process with a fake clock: rate limit, usage limit, model backoff, budgets, cooldown.

The real Loop runs over a real git project, with real agent processes and real files. Only the clock (a
FakeClock: every wait advances it at once and records what it slept) and the `ask` callback (the terminal)
are injected; the event sink stands in for the renderer and may advance the fake clock when an agent starts,
to stand for the minutes that agent would take.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from ralphloop.agents.claude.backend import ClaudeAgent
from ralphloop.agents.command import CommandAgent
from ralphloop.config.settings import load_settings
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import FakeClock
from ralphloop.core.events import CircuitChanged, IterationStarted, Notice, Waiting
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import Agent, iso
from ralphloop.core.runner import ProcessLimits
from ralphloop.engine.loop import LoopOutcome, run_loop
from ralphloop.guards.breaker import BreakerConfig
from ralphloop.guards.budget import Budget
from ralphloop.project.paths import RALPH_DIR, FeaturePaths
from ralphloop.project.resolve import resolve_feature
from ralphloop.start.build import RunRequest, build_run
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.words.figures import local_time
from ralphloop.workspace.gitignore import ensure_gitignore
from tests.conftest import AGENTS, PYTHON, agent_cmd, read_json, write_prd
from tests.integration.helpers import entry_fields, progress_entries
from tests.policies import tuned

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
LIMIT_TEXT = "Claude AI usage limit reached|{epoch}"  # the historical Claude Code sentence (see tests/fixtures/usage)
SONNET = "claude-sonnet-4-5-20250929"
# The breaker's consecutive counters when nothing has counted against it.
UNTOUCHED = {"consecutive_no_progress": 0, "consecutive_same_error": 0, "consecutive_failures": 0}
# The backoff of seed 004: 5 s doubling, capped at 600 s, 10 retries.
BACKOFF = [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0, 600.0]


# ---------------------------------------------------------------------------------------------- the harness


@pytest.fixture
def home(project: Path, ralph_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process (and so every agent it starts) gets the test environment: a private RALPH_HOME and a
    fixed git identity; the working directory is the project. Returns RALPH_HOME."""
    for key in list(os.environ):
        if key.startswith(("RALPH_", "GIT_")):
            monkeypatch.delenv(key)
    for key, value in ralph_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(project)
    return Path(ralph_env["RALPH_HOME"])


def stories(prefix: str, count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}-{n}", "title": f"Story {n}", "acceptanceCriteria": [f"c{n}"], "priority": n, "passes": False}
        for n in range(1, count + 1)
    ]


def make_feature(project: Path, name: str, items: list[dict[str, Any]]) -> FeaturePaths:
    """A feature folder with a prd.json, committed, its runtime files ignored by git (as `ralph run` does)."""
    write_prd(project / RALPH_DIR / name, items)
    ensure_gitignore(str(project / RALPH_DIR))
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"add {name}"], cwd=project, check=True)
    return resolve_feature(str(project), name)


class Run:
    """One real run (built by ralph's run builder, as `ralph run` builds it), with the agent, the policy's
    knobs and the ledger a test chooses; the events it emitted, and the fake time at which each agent started."""

    def __init__(
        self,
        paths: FeaturePaths,
        agent: Agent,
        clock: FakeClock,
        *,
        ledger: CallLedger | None = None,
        ask: Callable[[str, float], str | None] | None = None,
        work_s: float = 0.0,
        **config: Any,
    ) -> None:
        self.paths = paths
        self.clock = clock
        self.work_s = work_s  # how long each agent "takes": the fake clock moves on by this when one starts
        self.events: list[object] = []
        self.starts: list[datetime] = []
        self.hooks: list[Callable[[object], None]] = []
        self.cancel = CancelToken()
        home = os.environ["RALPH_HOME"]
        self.ledger = ledger or CallLedger(ledger_path(home, agent.name))
        # built with a command agent (the default, Claude Code, is not on PATH here), then given the test's own
        flags = {"agent_command": (agent_cmd("say.py", "unused"), "--agent-cmd")}
        request = RunRequest(feature=paths.name, flags=flags, archive=False, terminal=ask is not None)
        built = build_run(paths.project_root, request, clock=clock, sinks=[self.sink], cancel=self.cancel, ask=ask)
        policy = tuned(built.run.policy, max_iterations=10, limits=ProcessLimits(timeout_s=60.0))
        usage = policy.usage
        if "usage_margin_s" in config:
            usage = replace(usage, margin_s=config.pop("usage_margin_s"))
        if "usage_policy" in config:
            usage = replace(usage, action=config.pop("usage_policy"))
        policy = tuned(policy, usage=usage, **config)
        self.engine = replace(built.run, agent=agent, policy=policy, ledger=self.ledger)

    def sink(self, event: object) -> None:
        self.events.append(event)
        if isinstance(event, IterationStarted):
            self.starts.append(self.clock.now())
            self.clock.advance(self.work_s)
        for hook in self.hooks:
            hook(event)

    def run(self) -> LoopOutcome:
        try:
            return run_loop(self.engine)
        finally:
            self.cancel.close()

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]

    def waits(self, kind: str) -> list[list[Waiting]]:
        """The countdown ticks of each wait of `kind`, one list per wait (the closing `done` event left out)."""
        found: list[list[Waiting]] = []
        for event in self.of(Waiting):
            if event.kind != kind or event.done:
                continue
            if event.first:
                found.append([])
            found[-1].append(event)
        return found

    def status(self) -> dict[str, Any]:
        return read_json(Path(self.paths.status))

    def prd_passing(self) -> list[str]:
        return [story["id"] for story in read_json(Path(self.paths.prd))["userStories"] if story["passes"]]

    def transitions(self) -> list[tuple[str, str]]:
        return [(event.from_state, event.to_state) for event in self.of(CircuitChanged)]


def ledger_starts(ledger: CallLedger) -> list[datetime]:
    body = read_json(Path(ledger.path))
    return [datetime.fromisoformat(stamp) for stamp in body["starts"]]


def assert_countdown(ticks: list[Waiting], seconds: float, until: datetime) -> None:
    """One wait's ticks: it announced `seconds` until `until`, then counted down, one second at a time, to 0."""
    assert ticks[0].first and ticks[0].seconds_left == pytest.approx(seconds)
    assert {tick.until for tick in ticks} == {until}
    lefts = [tick.seconds_left for tick in ticks]
    assert all(later < earlier for earlier, later in itertools.pairwise(lefts)), lefts
    assert 0 < lefts[-1] <= 1.0


def breaker_counts(paths: FeaturePaths) -> dict[str, int]:
    """The breaker's consecutive counters as its state file holds them (all zero when no file was written)."""
    keys = ("consecutive_no_progress", "consecutive_same_error", "consecutive_failures")
    try:
        body = read_json(Path(paths.circuit_state))
    except FileNotFoundError:
        return dict.fromkeys(keys, 0)
    return {key: body[key] for key in keys}


def limit_once_agent(tmp_path: Path, resets_at: datetime) -> CommandAgent:
    """A command agent that hits a Claude usage limit (resetting at `resets_at`) on its first run, then works."""
    text = LIMIT_TEXT.format(epoch=int(resets_at.timestamp()))
    return CommandAgent(agent_cmd("limit_once.py", str(tmp_path / "limited-once"), text))


def fake_claude(tmp_path: Path, model: str, *, cost: float | None = None, work: bool = False) -> tuple[str, Path]:
    """An executable `claude` (tests/agents/fake_claude.py) reporting `model`; returns it and its call log."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    calls = tmp_path / "claude-calls.jsonl"
    config = folder / "fake_claude.json"
    config.write_text(json.dumps({"model": model, "cost": cost, "work": work, "calls": str(calls)}))
    executable = folder / "claude"
    executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "fake_claude.py"}" "{config}" "$@"\n')
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    return str(executable), calls


def claude_agent(project: Path, executable: str) -> ClaudeAgent:
    return ClaudeAgent(load_settings(str(project), {}, env={}), executable=executable)


def claude_calls(calls: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


# ---------------------------------------------------------------------------------------------- 1. rate limit


def test_two_loops_sharing_one_ledger_wait_for_a_slot_and_never_exceed_the_hourly_limit(
    project: Path, home: Path
) -> None:
    """Two features of one project, one account (one ledger file), 3 calls an hour: B waits for A's slots."""
    alpha = make_feature(project, "alpha", stories("A", 4))
    beta = make_feature(project, "beta", stories("B", 4))
    clock = FakeClock()
    t0 = clock.now()
    ledger = CallLedger(ledger_path(str(home), "one-account"))
    agent = CommandAgent(agent_cmd("story_agent.py"))

    first = Run(alpha, agent, clock, ledger=ledger, max_iterations=3, rate_limit_per_hour=3, work_s=300)
    assert first.run().reason is ExitReason.MAX_ITERATIONS
    assert first.starts == [t0, t0 + 5 * MINUTE, t0 + 10 * MINUTE]
    assert first.waits("rate limit") == [] and clock.slept == []
    assert ledger_starts(ledger) == first.starts
    assert first.prd_passing() == ["A-1", "A-2", "A-3"]

    second = Run(beta, agent, clock, ledger=ledger, max_iterations=3, rate_limit_per_hour=3, work_s=60)
    seen_waiting: list[dict[str, Any]] = []

    def on_first_tick(event: object) -> None:
        if isinstance(event, Waiting) and event.first:
            seen_waiting.append(second.status())

    second.hooks.append(on_first_tick)
    outcome = second.run()

    assert outcome.reason is ExitReason.MAX_ITERATIONS
    assert second.prd_passing() == ["B-1", "B-2", "B-3"]
    # Each of B's starts waits until the oldest start in the window is an hour old, and not a second more.
    assert second.starts == [start + HOUR for start in first.starts]
    waits = second.waits("rate limit")
    assert len(waits) == 3
    # B began at t0+15 min: 45 min to wait; then each agent "took" a minute: 4 min each.
    assert_countdown(waits[0], 45 * 60, t0 + HOUR)
    assert_countdown(waits[1], 4 * 60, t0 + 5 * MINUTE + HOUR)
    assert_countdown(waits[2], 4 * 60, t0 + 10 * MINUTE + HOUR)
    assert all("3/3 agent calls in the last hour" in tick.message for wait in waits for tick in wait)
    assert sum(clock.slept) == pytest.approx((45 + 4 + 4) * 60)
    assert [event.kind for event in second.of(Waiting)] == ["rate limit"] * len(second.of(Waiting))

    # status.json said what B was waiting for, while it waited, and no longer once it stopped waiting.
    assert seen_waiting[0]["waiting"] == {
        "kind": "rate limit",
        "message": "rate limit reached: 3/3 agent calls in the last hour",
        "until": iso(t0 + HOUR),
    }
    assert seen_waiting[0]["apiCallsUsed"] == 3 and seen_waiting[0]["apiCallsLimit"] == 3
    assert second.status()["waiting"] is None

    # The ledger file holds B's starts (A's have left the window), and no 60 minutes ever held more than 3.
    assert ledger_starts(ledger) == second.starts
    every = sorted(first.starts + second.starts)
    for start in every:
        assert sum(start <= other < start + HOUR for other in every) <= 3, (start, every)


# ---------------------------------------------------------------------------------------------- 2. usage limit


def test_usage_limit_waits_until_the_reset_and_the_limited_iteration_does_not_count(
    project: Path, home: Path, tmp_path: Path
) -> None:
    paths = make_feature(project, "feat", stories("S", 3))
    clock = FakeClock()
    t0 = clock.now()
    resets = t0 + 2 * HOUR
    run = Run(paths, limit_once_agent(tmp_path, resets), clock, max_iterations=2, usage_margin_s=60.0)
    during_wait: list[tuple[dict[str, Any], dict[str, int], dict[str, Any]]] = []

    def on_first_tick(event: object) -> None:
        if isinstance(event, Waiting) and event.first:
            during_wait.append((run.status(), breaker_counts(paths), read_json(Path(paths.state))))

    run.hooks.append(on_first_tick)
    outcome = run.run()

    # Waited until the reset plus the margin, by itself, then did its two real iterations.
    assert sum(clock.slept) == pytest.approx(2 * 3600 + 60)
    waits = run.waits("usage limit")
    assert len(waits) == 1
    assert_countdown(waits[0], 2 * 3600 + 60, resets + MINUTE)
    assert run.starts == [t0, resets + MINUTE, resets + MINUTE]
    assert outcome.reason is ExitReason.MAX_ITERATIONS
    assert run.prd_passing() == ["S-1", "S-2"]
    started = run.of(IterationStarted)
    # One number per iteration; the count toward max_iterations (this run's counted ones) beside it.
    assert [(event.number, event.tally.counted, event.tally.uncounted, event.task_id) for event in started] == [
        (1, 0, 0, "S-1"),  # the limited one
        (2, 0, 1, "S-1"),  # the same task again, as the first counted iteration
        (3, 1, 1, "S-2"),
    ]

    # Nothing counted it as a failure: no breaker counter, no retry, no failure mark.
    status, counts, state = during_wait[0]
    assert counts == UNTOUCHED
    assert state["retry_count"] == 0
    assert status["waiting"]["kind"] == "usage limit"
    assert status["circuitState"] == "CLOSED"
    assert breaker_counts(paths)["consecutive_failures"] == 0
    limit = run.status()["usageLimit"]
    assert limit["message"] == "Claude AI usage limit reached"
    assert (limit["vendor"], limit["resetsAt"], limit["policy"]) == ("claude", iso(resets), "wait")
    first = entry_fields(progress_entries(Path(paths.progress).read_text())[0])
    assert first["Status"] == "usage-limit"
    assert "not counted as an iteration" in first["Note"]
    assert "[FAIL]" not in Path(paths.progress).read_text()


def test_usage_limit_policy_exit_stops_with_exit_code_2(project: Path, home: Path, tmp_path: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    clock = FakeClock()
    resets = clock.now() + 2 * HOUR
    run = Run(paths, limit_once_agent(tmp_path, resets), clock, usage_policy="exit")
    outcome = run.run()

    assert outcome.reason is ExitReason.USAGE_LIMIT and outcome.reason.exit_code == 2
    assert outcome.message == "usage limit: Claude AI usage limit reached"
    assert local_time(resets) in outcome.guidance
    assert clock.slept == [] and run.of(Waiting) == []
    assert len(run.starts) == 1
    assert breaker_counts(paths) == UNTOUCHED
    assert read_json(Path(paths.state))["retry_count"] == 0
    status = run.status()
    assert status["exitReason"] == "usage_limit"
    assert status["usageLimit"]["policy"] == "exit" and status["usageLimit"]["resetsAt"] == iso(resets)


@pytest.mark.parametrize(("answer", "exits"), [("exit", True), ("wait", False), (None, True)])
def test_usage_limit_policy_ask(project: Path, home: Path, tmp_path: Path, answer: str | None, exits: bool) -> None:
    """Policy ask: the user's "exit" stops the run, "wait" waits for the reset; no answer at all exits, as seed 003
    says (`usage_limit.on_no_answer`, test_usage_ask.py)."""
    paths = make_feature(project, "feat", stories("S", 1))
    clock = FakeClock()
    resets = clock.now() + 2 * HOUR
    asked: list[tuple[str, float]] = []

    def ask(question: str, timeout: float) -> str | None:
        asked.append((question, timeout))
        return answer

    run = Run(paths, limit_once_agent(tmp_path, resets), clock, usage_policy="ask", ask=ask)
    outcome = run.run()

    assert len(asked) == 1
    question, timeout = asked[0]
    assert timeout == 30.0
    assert "Usage limit reached (Claude AI usage limit reached" in question
    assert f"resets at {local_time(resets)}" in question
    assert question.endswith("Wait or exit? (exiting in 30s unless told)")
    if exits:
        assert outcome.reason is ExitReason.USAGE_LIMIT and outcome.reason.exit_code == 2
        assert clock.slept == [] and len(run.starts) == 1
        assert run.status()["usageLimit"]["policy"] == "exit"
    else:
        assert outcome.reason is ExitReason.COMPLETE
        assert sum(clock.slept) == pytest.approx(2 * 3600 + 60)
        assert run.starts == [resets - 2 * HOUR, resets + MINUTE]
        assert run.status()["usageLimit"]["policy"] == "wait"


# ---------------------------------------------------------------------------------------------- 3. model check


def test_wrong_model_backs_off_5_10_20_capped_at_600_then_stops_after_10_retries(
    project: Path, home: Path, tmp_path: Path
) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    executable, calls = fake_claude(tmp_path, SONNET)
    clock = FakeClock()
    run = Run(paths, claude_agent(project, executable), clock, model="opus", max_iterations=2)
    outcome = run.run()

    assert outcome.reason is ExitReason.MODEL_MISMATCH
    assert f"got {SONNET} instead of opus after 10 retries" in outcome.message
    assert "--poorman" in outcome.guidance
    waits = run.waits("model backoff")
    assert [wait[0].seconds_left for wait in waits] == BACKOFF
    for wait in waits:
        assert_countdown(wait, wait[0].seconds_left, wait[0].until)
    assert sum(clock.slept) == pytest.approx(sum(BACKOFF))
    # The first try and ten retries, none of them counted toward max_iterations (2), each asking for opus.
    made = claude_calls(calls)
    assert len(made) == 11
    assert all(call["args"][4:6] == ["--model", "opus"] for call in made)
    assert [event.tally.counted for event in run.of(IterationStarted)] == [0] * 11
    # Each retry started once its backoff was over.
    gaps = [(later - earlier).total_seconds() for earlier, later in itertools.pairwise(run.starts)]
    assert gaps == BACKOFF
    status = run.status()
    assert status["model"] == SONNET
    assert status["exitReason"] == "model_mismatch"
    assert run.prd_passing() == []


def test_poorman_accepts_any_model_without_retrying(project: Path, home: Path, tmp_path: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    executable, calls = fake_claude(tmp_path, SONNET, work=True)
    clock = FakeClock()
    run = Run(paths, claude_agent(project, executable), clock, model="opus", poorman=True, max_iterations=1)
    outcome = run.run()

    assert outcome.reason is ExitReason.MAX_ITERATIONS
    assert clock.slept == [] and run.of(Waiting) == []
    assert len(claude_calls(calls)) == 1
    assert run.prd_passing() == ["S-1"]


def test_matching_model_proceeds(project: Path, home: Path, tmp_path: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    executable, calls = fake_claude(tmp_path, SONNET, work=True)
    clock = FakeClock()
    run = Run(paths, claude_agent(project, executable), clock, model="sonnet")
    outcome = run.run()

    assert outcome.reason is ExitReason.COMPLETE
    assert clock.slept == [] and run.of(Waiting) == []
    assert [call["args"][4:6] for call in claude_calls(calls)] == [["--model", "sonnet"]] * 2
    assert run.status()["model"] == SONNET


def test_a_command_agent_cannot_verify_the_model_and_is_told_once(project: Path, home: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    clock = FakeClock()
    run = Run(paths, CommandAgent(agent_cmd("story_agent.py")), clock, model="opus")
    outcome = run.run()

    assert outcome.reason is ExitReason.COMPLETE
    warnings = [event.message for event in run.of(Notice) if event.level == "warning"]
    assert warnings == ["cannot verify --model opus: the agent did not report its model"]
    assert clock.slept == []


# ---------------------------------------------------------------------------------------------- 4. budgets


def test_runtime_budget_used_up_by_a_rate_limit_wait_stops_before_the_next_agent(project: Path, home: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 3))
    clock = FakeClock()
    run = Run(
        paths,
        CommandAgent(agent_cmd("story_agent.py")),
        clock,
        rate_limit_per_hour=1,
        budget=Budget(max_runtime_s=1800.0),
    )
    outcome = run.run()

    assert outcome.reason is ExitReason.BUDGET
    assert "runtime budget reached" in outcome.message
    assert len(run.starts) == 1
    assert run.prd_passing() == ["S-1"]
    assert len(ledger_starts(run.ledger)) == 1


def test_runtime_budget_used_up_by_a_usage_limit_wait_stops_before_the_next_agent(
    project: Path, home: Path, tmp_path: Path
) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    clock = FakeClock()
    resets = clock.now() + 2 * HOUR
    run = Run(paths, limit_once_agent(tmp_path, resets), clock, budget=Budget(max_runtime_s=3600.0))
    outcome = run.run()

    assert outcome.reason is ExitReason.BUDGET
    assert outcome.message == "runtime budget reached: 1h of max_runtime 1h"  # the wait stopped at the budget
    assert outcome.duration_s == pytest.approx(3600)  # not the whole 2 h wait for the usage limit
    assert len(run.starts) == 1  # only the limited run: no agent started after the budget was used up
    assert len(ledger_starts(run.ledger)) == 1
    assert run.status()["exitReason"] == "budget"


def test_cost_budget_stops_once_the_reported_cost_reaches_it(project: Path, home: Path, tmp_path: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 4))
    executable, calls = fake_claude(tmp_path, SONNET, cost=0.25, work=True)
    clock = FakeClock()
    run = Run(paths, claude_agent(project, executable), clock, budget=Budget(max_cost_usd=0.6))
    outcome = run.run()

    assert outcome.reason is ExitReason.BUDGET
    assert outcome.message == "cost budget reached: $0.75 of max_cost_usd $0.60"
    assert len(claude_calls(calls)) == 3
    assert run.prd_passing() == ["S-1", "S-2", "S-3"]
    assert run.status()["costUsd"] == pytest.approx(0.75)
    assert clock.slept == []


# ---------------------------------------------------------------------------------------------- 5. cooldown


STAGNANT = ("say.py", "still working on it")  # exits 0, changes nothing: no progress, not a failure


def test_open_circuit_cools_down_then_probes_once_and_reopens(project: Path, home: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    clock = FakeClock()
    run = Run(
        paths,
        CommandAgent(agent_cmd(*STAGNANT)),
        clock,
        max_iterations=None,
        breaker=BreakerConfig(cooldown_s=600.0),
        work_s=60,
    )

    def stop_at_the_second_cooldown(event: object) -> None:
        if isinstance(event, Waiting) and event.first and len(run.waits("circuit cooldown")) == 2:
            run.cancel.set()

    run.hooks.append(stop_at_the_second_cooldown)
    outcome = run.run()

    assert outcome.reason is ExitReason.INTERRUPTED  # by this test, during the second cooldown
    assert run.transitions() == [
        ("CLOSED", "HALF_OPEN"),  # monitoring mode after 2 iterations without progress
        ("HALF_OPEN", "OPEN"),  # open at 3
        ("OPEN", "HALF_OPEN"),  # the cooldown passed: on probation
        ("HALF_OPEN", "OPEN"),  # the probe made no progress: open again at once
    ]
    assert len(run.starts) == 4  # three, then one probe
    cooldowns = run.waits("circuit cooldown")
    opened = run.starts[2] + MINUTE  # the third agent "took" a minute
    assert_countdown(cooldowns[0], 600.0, opened + 10 * MINUTE)
    assert run.starts[3] == opened + 10 * MINUTE
    assert cooldowns[1][0].seconds_left == pytest.approx(600.0)
    assert sum(clock.slept) == pytest.approx(600.0 + 1.0)  # and one tick of the second before the cancel
    history = read_json(Path(paths.circuit_history))["transitions"]
    assert [(item["from_state"], item["to_state"]) for item in history] == run.transitions()
    assert "cooldown of 10 min passed" in history[2]["reason"]


def test_max_iterations_bounds_a_run_that_keeps_reopening_its_circuit(project: Path, home: Path) -> None:
    paths = make_feature(project, "feat", stories("S", 2))
    clock = FakeClock()
    run = Run(
        paths,
        CommandAgent(agent_cmd(*STAGNANT)),
        clock,
        max_iterations=4,
        breaker=BreakerConfig(cooldown_s=600.0),
    )

    def safety_net(event: object) -> None:  # the bug loops forever: stop it well past the bound
        if isinstance(event, IterationStarted) and len(run.starts) > 6:
            run.cancel.set()

    run.hooks.append(safety_net)
    outcome = run.run()

    # The last allowed probe reopened the circuit: the run says so rather than "max iterations".
    assert outcome.reason is ExitReason.CIRCUIT_OPEN
    assert len(run.starts) == 4
    assert len(run.waits("circuit cooldown")) == 1
