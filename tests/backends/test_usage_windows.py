"""The account's usage windows each call reports (issue 34): Claude Code's `rate_limit_event` (its
`unifiedWindows`, captured from the real CLI against a loopback API: tests/fixtures/usage/) and Codex's session file
(`rate_limits.primary|secondary`, tests/fixtures/codex/), read as UsageWindow values, never guessed."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.agents.claude.limit_events import windows_of
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.codex import session_file
from ralphloop.core.limits import LimitWarning, UsageWindow
from ralphloop.core.protocols import ProcessOutcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ralphloop.agents.agent_limits import LimitBook

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NOW = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
ROLLOUT = "rollout-2026-11-20T23-04-21-01a1fb34-269c-75a3-b001-6ba1b3044dfd.jsonl"


def epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def events(name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / "usage" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def event(**info: Any) -> dict[str, Any]:
    return {"type": "rate_limit_event", "rate_limit_info": info}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude_stream_oauth_warning.jsonl", UsageWindow("five_hour", 0.92, epoch(1795226431))),  # allowed_warning
        ("claude_stream_oauth_weekly.jsonl", UsageWindow("seven_day", 1.0, epoch(1795395630))),  # rejected
    ],
)
def test_claude_reports_each_window_with_its_share_and_reset(name: str, expected: UsageWindow) -> None:
    found = [window for item in events(name) for window in windows_of(item)]
    assert found == [expected]
    parser = StreamJsonParser(started_at=NOW)
    parser.feed((FIXTURES / "usage" / name).read_bytes())
    assert parser.finish(ProcessOutcome(exit_code=1, duration_s=0.1)).windows == (expected,)


def test_every_window_of_the_event_is_read_and_the_last_report_of_each_wins() -> None:
    first = event(
        status="allowed",
        rateLimitType="five_hour",
        utilization=0.2,
        resetsAt=1795226431,
        unifiedWindows={
            "seven_day": {"utilization": 0.41, "resetsAt": 1795395630},
            "seven_day_opus": {"utilization": 0},
        },
    )
    assert windows_of(first) == (
        UsageWindow("five_hour", 0.2, epoch(1795226431)),
        UsageWindow("seven_day", 0.41, epoch(1795395630)),
        UsageWindow("seven_day_opus", 0.0, None),
    )
    later = event(status="allowed_warning", rateLimitType="five_hour", utilization=0.85, resetsAt=1795226431)
    parser = StreamJsonParser(started_at=NOW)
    parser.feed(f"{json.dumps(first)}\n{json.dumps(later)}\n".encode())
    names = {window.name: window.utilization for window in parser.finish(ProcessOutcome(0, 0.1)).windows}
    assert names == {"five_hour": 0.85, "seven_day": 0.41, "seven_day_opus": 0.0}


def test_the_lists_own_figures_win_over_the_summary() -> None:
    said = event(rateLimitType="five_hour", utilization=0.5, unifiedWindows={"five_hour": {"utilization": 0.6}})
    assert windows_of(said) == (UsageWindow("five_hour", 0.6, None),)


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (
            {"status": "rejected", "rateLimitType": "five_hour"},
            (UsageWindow("five_hour", 1.0, None),),
        ),  # refused: used up
        ({"status": "allowed", "rateLimitType": "five_hour"}, ()),  # no share said: none guessed
        ({"rateLimitType": "five_hour", "utilization": 7}, (UsageWindow("five_hour", 1.0, None),)),  # over: capped
        ({"rateLimitType": "five_hour", "utilization": -1}, (UsageWindow("five_hour", 0.0, None),)),
        ({"rateLimitType": "five_hour", "utilization": True}, ()),
        ({"rateLimitType": "five_hour", "utilization": "0.5"}, ()),
        ({"rateLimitType": "five_hour", "utilization": math.nan}, ()),
        (
            {"rateLimitType": "five_hour", "utilization": 0.5, "resetsAt": "soon"},
            (UsageWindow("five_hour", 0.5, None),),
        ),
        ({"rateLimitType": 5, "utilization": 0.5}, ()),
        ({"unifiedWindows": ["five_hour"]}, ()),
        ({"unifiedWindows": {"five_hour": 0.5, "": {"utilization": 0.5}}}, ()),
    ],
)
def test_fields_of_the_wrong_kind_give_no_window(info: dict[str, Any], expected: tuple[UsageWindow, ...]) -> None:
    assert windows_of(event(**info)) == expected


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["status", "rateLimitType", "utilization", "resetsAt", "unifiedWindows"]), JSON))
def test_no_event_makes_it_raise(info: dict[str, Any]) -> None:
    for window in windows_of(event(**info)):
        assert 0.0 <= window.utilization <= 1.0


def test_other_events_have_no_windows() -> None:
    assert windows_of({"type": "assistant", "rate_limit_info": {"rateLimitType": "five_hour", "utilization": 1}}) == ()
    assert windows_of({"type": "rate_limit_event", "rate_limit_info": None}) == ()


def test_codex_reports_its_primary_and_weekly_windows(tmp_path: Path) -> None:
    facts = session_file.read(FIXTURES / "codex" / ROLLOUT)
    assert facts.windows == (
        UsageWindow("five_hour", 1.0, epoch(1795223061)),
        UsageWindow("seven_day", 0.4, epoch(1795475061)),
    )


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({"primary": {"used_percent": 12.5, "window_minutes": 300, "resets_at": 1795223061}}, ("five_hour", 0.125)),
        ({"secondary": {"used_percent": 3, "window_minutes": 1440}}, ("1440_minutes", 0.03)),
        ({"primary": {"used_percent": 150, "window_minutes": 300}}, ("five_hour", 1.0)),
        ({"primary": {"used_percent": 50}}, None),  # no length: no name to cap it by
        ({"primary": {"used_percent": None, "window_minutes": 300}}, None),
        ({"primary": {"used_percent": True, "window_minutes": 300}}, None),
        ({"primary": {"used_percent": 50, "window_minutes": 0}}, None),
        ({"primary": "full"}, None),
    ],
)
def test_codex_windows_of_the_wrong_kind_are_left_out(
    tmp_path: Path, limits: dict[str, Any], expected: tuple[str, float] | None
) -> None:
    path = tmp_path / "rollout.jsonl"
    line = {
        "timestamp": "2026-11-20T23:04:21Z",
        "type": "event_msg",
        "payload": {"type": "token_count", "rate_limits": limits},
    }
    path.write_text(json.dumps(line) + "\n")
    found = [(window.name, window.utilization) for window in session_file.read(path).windows]
    assert found == ([expected] if expected else [])


def test_the_codex_parser_carries_them(tmp_path: Path) -> None:
    from ralphloop.agents.codex.parser import CodexJsonParser

    day = tmp_path / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex" / ROLLOUT, day / ROLLOUT)
    folder = FIXTURES / "codex" / "mock_usage_limit_plus_json"
    parser = CodexJsonParser(datetime(2026, 11, 20, 23, 4, 21, tzinfo=UTC), model=None, codex_home=tmp_path)
    parser.feed((folder / "stdout").read_bytes())
    result = parser.finish(ProcessOutcome(exit_code=1, duration_s=1.0, stderr_tail=(folder / "stderr").read_text()))
    assert [window.name for window in result.windows] == ["five_hour", "seven_day"]


def test_a_window_near_its_limit_warns_though_the_summary_says_allowed() -> None:
    """Claude Code 2.1.329 (captured against the loopback API, the 5-hour window 92 % used an hour before its reset)
    keeps the event's own status `allowed` and says `allowed_warning` in the window: `usage_limit.pause_at` reads it."""
    run = FIXTURES / "claude" / "runs" / "claude_mock_oauth_unified_window_warning_streamjson"
    parser = StreamJsonParser(NOW)
    parser.feed((run / "stdout").read_bytes())
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.limit_warning == LimitWarning(0.92, epoch(1796602963), "five_hour")
    assert result.usage_limit is None and [w.utilization for w in result.windows] == [0.92, 0.1]


# --------------------------------------------------------------------------------------------------------------
# the book: every loop on one account sees the windows its calls last reported

KEY = "claude/login:/home/me/.claude"
LATER = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)  # after the five_hour window's reset (02:00:31), before the week's


def book(tmp_path: Path) -> LimitBook:
    from ralphloop.agents.agent_limits import LimitBook

    return LimitBook(str(tmp_path / "home" / "agent-limits.json"))


def test_two_loops_on_one_account_see_one_truth(tmp_path: Path) -> None:
    first, second = book(tmp_path), book(tmp_path)  # two loops, one file
    five = UsageWindow("five_hour", 0.42, epoch(1795226431))
    week = UsageWindow("seven_day", 0.1, epoch(1795395630))
    first.note(KEY, (five, week), NOW)
    later = UsageWindow("five_hour", 0.5, epoch(1795226431))
    second.note(KEY, (later,), NOW + timedelta(minutes=5))
    seen = first.windows(NOW + timedelta(minutes=6))
    assert {name: reading.window for name, reading in seen[KEY].items()} == {"five_hour": later, "seven_day": week}
    assert seen[KEY]["five_hour"].read_at == NOW + timedelta(minutes=5)
    assert seen[KEY]["seven_day"].read_at == NOW
    # a window past its reset is no longer known: its share is not kept
    assert list(first.windows(LATER)[KEY]) == ["seven_day"]


def test_limits_and_windows_keep_each_other(tmp_path: Path) -> None:
    from ralphloop.agents.agent_limits import Limited

    shared = book(tmp_path)
    shared.note(KEY, (UsageWindow("five_hour", 1.0, epoch(1795226431)),), NOW)
    shared.mark(KEY, Limited(epoch(1795226431), "usage_limit", "Claude 5-hour limit reached"), NOW)
    shared.note("codex/login:/home/me/.codex", (UsageWindow("seven_day", 0.4, None),), NOW)
    assert list(shared.active(NOW)) == [KEY]
    assert sorted(shared.windows(NOW)) == [KEY, "codex/login:/home/me/.codex"]
    written = json.loads((tmp_path / "home" / "agent-limits.json").read_text())
    assert written["windows"][KEY]["five_hour"] == {
        "utilization": 1.0,
        "resetsAt": "2026-11-21T02:00:31Z",
        "readAt": "2026-11-20T23:00:00Z",
    }


def test_a_book_an_older_ralph_wrote_reads_without_windows(tmp_path: Path) -> None:
    path = tmp_path / "home" / "agent-limits.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"schema_version": 1, "limits": {}}))
    assert book(tmp_path).windows(NOW) == {}


@pytest.mark.parametrize(
    "windows",
    [
        [],
        {KEY: []},
        {KEY: {"five_hour": {"utilization": 2, "readAt": "2026-11-20T23:00:00Z"}}},
        {KEY: {"five_hour": {"utilization": 0.5}}},
        {KEY: {"five_hour": {"utilization": 0.5, "readAt": "yesterday"}}},
        {KEY: {"five_hour": {"utilization": 0.5, "readAt": "2026-11-20T23:00:00"}}},  # no zone
        {KEY: {"five_hour": {"utilization": 0.5, "readAt": "2026-11-20T23:00:00Z", "resetsAt": 5}}},
    ],
)
def test_a_damaged_windows_section_is_one_line_naming_the_file(tmp_path: Path, windows: Any) -> None:
    from ralphloop.core.errors import RalphError

    path = tmp_path / "home" / "agent-limits.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"schema_version": 1, "limits": {}, "windows": windows}))
    before = path.read_bytes()
    with pytest.raises(RalphError, match=r"agent-limits\.json: not a valid file of agent limits \(.*\); delete it"):
        book(tmp_path).windows(NOW)
    assert path.read_bytes() == before


def test_the_failover_chain_notes_each_calls_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real claude backend, reading a real capture: the windows its call reported are in the book."""
    from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook
    from ralphloop.agents.failover import FailoverAgent, account_key
    from ralphloop.agents.registry import make_agent
    from ralphloop.config.settings import load_settings
    from ralphloop.core.clock import FakeClock
    from ralphloop.core.protocols import AgentRequest
    from ralphloop.project.paths import FeaturePaths

    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    for variable in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    (tmp_path / "project").mkdir()
    settings = load_settings(str(tmp_path / "project"), {"agent": ("claude", "--agent")}, env={})
    paths = FeaturePaths(str(tmp_path / "project"), str(tmp_path / "project" / ".ralph" / "feat"))
    clock = FakeClock(start=NOW)
    agent = make_agent(settings, paths, dry_run=True, clock=clock)
    assert isinstance(agent, FailoverAgent)
    asked = AgentRequest(
        prompt="p", iteration=1, project_root="/", feature_dir="/", prompt_file="/p", task_id="S-1", started_at=NOW
    )
    agent.command(asked)
    parser = agent.parser(asked)
    parser.feed((FIXTURES / "usage" / "claude_stream_oauth_warning.jsonl").read_bytes())
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    assert result.windows == (UsageWindow("five_hour", 0.92, epoch(1795226431)),)
    held = LimitBook(str(tmp_path / "home" / LIMITS_FILE)).windows(NOW)
    assert held[account_key(agent.agents[0])]["five_hour"].window == result.windows[0]
