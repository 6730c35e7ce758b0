"""Pacing a failover chain against the user's caps on usage windows (issue 34): the real claude and codex backends
read a real CLI's output (Claude Code 2.1.329's `rate_limit_event` with `unifiedWindows`, captured against a
loopback API), the book of windows is a real file, and the clock is injected. An account past a cap is passed over
for one with headroom; when none has any, the chain is held until the first cap lifts, without a call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from msgspec.structs import replace

from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook
from ralphloop.agents.failover import FailoverAgent, account_key
from ralphloop.agents.registry import make_agent
from ralphloop.config.settings import load_settings
from ralphloop.core.clock import FakeClock
from ralphloop.core.limits import UsageWindow
from ralphloop.core.protocols import AgentRequest, AgentResult, ProcessOutcome
from ralphloop.project.paths import FeaturePaths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# five_hour 30 % (resets 2027-01-01 02:00Z), seven_day 10 % (resets 2027-01-07 00:00Z)
CLAUDE_WINDOWS = FIXTURES / "claude" / "runs" / "claude_mock_oauth_unified_allowed_streamjson"
START = datetime(2027, 1, 1, tzinfo=UTC)
FIVE_HOUR_RESET = datetime(2027, 1, 1, 2, tzinfo=UTC)


def chain(tmp_path: Path, clock: FakeClock, caps: list[str], names: str = "claude,codex") -> FailoverAgent:
    (tmp_path / "project").mkdir(parents=True, exist_ok=True)
    flags = {"agent": (names, "--agent"), "usage_windows": (caps, "--max-window")}
    settings = load_settings(str(tmp_path / "project"), flags, env={})
    paths = FeaturePaths(str(tmp_path / "project"), str(tmp_path / "project" / ".ralph" / "feat"))
    agent = make_agent(settings, paths, dry_run=True, clock=clock)
    assert isinstance(agent, FailoverAgent)
    return agent


def request() -> AgentRequest:
    return AgentRequest(
        prompt="p", iteration=1, project_root="/", feature_dir="/", prompt_file="/p", task_id="S-1", started_at=START
    )


def claude_call(agent: FailoverAgent, five_hour: float) -> AgentResult:
    """The chain picks its agent, which reads the captured run with the 5-hour window's share set to `five_hour`."""
    agent.command(request())
    share = f'"utilization":{five_hour}'.encode()
    stdout = (CLAUDE_WINDOWS / "stdout").read_bytes().replace(b'"utilization":0.3', share)
    parser = agent.parser(request())
    parser.feed(stdout)
    return parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))


def note(agent: FailoverAgent, member: int, clock: FakeClock, *windows: UsageWindow) -> None:
    agent.book.note(account_key(agent.agents[member]), windows, clock.now())


def test_one_agent_is_held_once_a_call_reports_its_window_at_the_cap(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["five_hour=50%"], names="claude")
    assert agent.held(clock.now()) is None
    claude_call(agent, 0.3)
    assert agent.held(clock.now()) is None  # 30 % of the 5-hour window: headroom
    claude_call(agent, 0.55)
    held = agent.held(clock.now())
    assert held is not None and (held.kind, held.resets_at, held.source) == ("five_hour", FIVE_HOUR_RESET, "window")
    assert "55% used, at or past your cap of 50%" in held.message
    # the book is every loop's: a second chain on the same account (another loop) is held too, without a call
    other = chain(tmp_path / "other", FakeClock(start=START), ["five_hour=50%"], names="claude")
    assert other.held(clock.now()) == held
    clock.advance(timedelta(hours=2).total_seconds())  # the window resets: its share is no longer known
    assert agent.held(clock.now()) is None


def test_without_a_cap_nothing_is_held_whatever_the_share(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, [], names="claude")
    claude_call(agent, 1.0)
    assert agent.held(clock.now()) is None


def test_the_next_agent_with_headroom_takes_the_iteration_and_the_first_returns_after_its_reset(
    tmp_path: Path, home: Path
) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["five_hour=50%"])
    told: list[str] = []
    agent.tell = told.append
    claude_call(agent, 0.6)  # a call that went well, and reported 60 %
    assert agent.held(clock.now()) is None  # codex has headroom
    agent.command(request())
    assert agent.name == "codex"
    assert told and "claude's 5-hour window is 60% used" in told[0] and told[0].endswith("runs on codex")
    agent.command(request())
    assert len(told) == 1  # told when the chain moved, not at every call
    clock.advance(timedelta(hours=2).total_seconds() + 1)
    agent.command(request())
    assert agent.name == "claude"


def test_when_every_agent_is_past_a_cap_the_chain_is_held_until_the_first_lifts(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["all=80%"])
    note(agent, 0, clock, UsageWindow("seven_day", 0.9, START + timedelta(days=3)))
    note(agent, 1, clock, UsageWindow("five_hour", 0.85, START + timedelta(hours=4)))
    held = agent.held(clock.now())
    assert held is not None and (held.vendor, held.kind) == ("codex", "five_hour")
    assert held.resets_at == START + timedelta(hours=4)
    clock.advance(timedelta(hours=4).total_seconds())
    assert agent.held(clock.now()) is None
    agent.command(request())
    assert agent.name == "codex"


def test_a_vendors_limit_that_ends_first_is_met_by_calling_not_held(tmp_path: Path, home: Path) -> None:
    """A vendor's refusal costs nothing and says when it ends: when it frees an agent before any cap lifts, the
    chain calls (and the usage-limit policy acts on the answer); held is for the user's caps."""
    from ralphloop.agents.agent_limits import Limited

    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["all=80%"])
    note(agent, 0, clock, UsageWindow("five_hour", 0.9, START + timedelta(hours=3)))
    agent.book.mark(account_key(agent.agents[1]), Limited(START + timedelta(hours=1), "usage_limit", "x"), START)
    assert agent.held(clock.now()) is None
    agent.command(request())
    assert agent.name == "codex"


def test_a_damaged_book_holds_nothing_and_is_told_once(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["all=80%"])
    warned: list[str] = []
    agent.warn = warned.append
    home.mkdir(parents=True, exist_ok=True)
    (home / LIMITS_FILE).write_text("{not json")
    assert agent.held(clock.now()) is None and agent.held(clock.now()) is None
    assert len(warned) == 1 and LIMITS_FILE in warned[0]


def test_the_book_keeps_what_the_cli_reported_per_account(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["five_hour=50%"], names="claude")
    claude_call(agent, 0.3)
    readings = LimitBook(str(home / LIMITS_FILE)).windows(clock.now())[account_key(agent.agents[0])]
    assert {name: r.window.utilization for name, r in readings.items()} == {"five_hour": 0.3, "seven_day": 0.1}
    assert readings["seven_day"].window.resets_at == datetime(2027, 1, 7, tzinfo=UTC)
    assert replace(readings["five_hour"], read_at=START) == readings["five_hour"]


def test_a_run_that_begins_with_its_first_agent_past_a_cap_says_so_at_its_first_call(
    tmp_path: Path, home: Path
) -> None:
    clock = FakeClock(start=START)
    first = chain(tmp_path, clock, ["five_hour=50%"])
    note(first, 0, clock, UsageWindow("five_hour", 0.7, FIVE_HOUR_RESET))  # another loop's reading
    agent = chain(tmp_path / "again", clock, ["five_hour=50%"])
    told: list[str] = []
    agent.tell = told.append
    agent.command(request())
    assert agent.name == "codex" and len(told) == 1 and "claude's 5-hour window is 70% used" in told[0]


def test_start_at_reset_is_when_the_first_agents_account_is_free_again(tmp_path: Path, home: Path) -> None:
    from ralphloop.agents.agent_limits import Limited

    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, ["five_hour=50%"])
    assert agent.next_reset(clock.now()) is None  # nothing known
    note(
        agent,
        0,
        clock,
        UsageWindow("five_hour", 0.2, FIVE_HOUR_RESET),
        UsageWindow("seven_day", 0.9, START + timedelta(days=3)),
    )
    assert agent.next_reset(clock.now()) == FIVE_HOUR_RESET  # the capped window (seven_day has no cap)
    vendor = START + timedelta(hours=5)
    agent.book.mark(account_key(agent.agents[0]), Limited(vendor, "usage_limit", "limited"), START)
    assert agent.next_reset(clock.now()) == vendor  # refused by its vendor until then
