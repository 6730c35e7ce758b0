"""FailoverAgent over the real claude and codex backends, reading real captured runs, with an injected clock:
the order it picks agents in, the hand-over at a limit or a failed login, the return after the reset, and the
book of limits shared through a real file."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from msgspec.structs import replace

from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook, Limited
from ralphloop.agents.failover import FailoverAgent, account_key
from ralphloop.agents.registry import make_agent
from ralphloop.config.settings import load_settings
from ralphloop.core.clock import FakeClock
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentRequest, AgentResult, ErrorKind, ProcessOutcome
from ralphloop.project.paths import FeaturePaths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE_LIMIT = FIXTURES / "claude" / "runs" / "claude_mock_oauth_unified_rejected_streamjson"  # resets 02:00:20
CLAUDE_401 = FIXTURES / "claude" / "runs" / "claude_mock_auth_401_streamjson"
CLAUDE_OK = FIXTURES / "claude" / "runs" / "claude_mock_tool_streamjson"
CODEX_OK = FIXTURES / "codex" / "mock_tool_json"
CODEX_LIMIT = FIXTURES / "codex" / "mock_usage_limit_plus_json"  # resets 01:04
START = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)


def chain(tmp_path: Path, clock: FakeClock, names: str = "claude,codex", model: str | None = "opus") -> FailoverAgent:
    (tmp_path / "project").mkdir(exist_ok=True)
    flags = {"agent": (names, "--agent"), **({"model": (model, "--model")} if model else {})}
    settings = load_settings(str(tmp_path / "project"), flags, env={})
    paths = FeaturePaths(str(tmp_path / "project"), str(tmp_path / "project" / ".ralph" / "feat"))
    agent = make_agent(settings, paths, dry_run=True, clock=clock)
    assert isinstance(agent, FailoverAgent)
    return agent


def request(model: str | None = "opus", session: str | None = None) -> AgentRequest:
    return AgentRequest(
        prompt="p", iteration=1, project_root="/", feature_dir="/", prompt_file="/p", task_id="S-1",
        started_at=START, model=model, resume_session=session,
    )  # fmt: skip


def one_run(agent: FailoverAgent, capture: Path, clock: FakeClock, session: str | None = None) -> AgentResult:
    """The chain picks an agent, which reads `capture` as the real CLI printed it."""
    asked = request(session=session)
    agent.command(asked)
    parser = agent.parser(replace(asked, started_at=clock.now()))
    parser.feed((capture / "stdout").read_bytes())
    code = int((capture / "rc").read_text())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=(capture / "stderr").read_text()))


def test_the_first_agent_runs_until_its_limit_then_the_next_until_the_reset_passes(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    assert agent.name == "claude"
    result = one_run(agent, CLAUDE_LIMIT, clock)
    assert (result.agent, result.failover_to, result.model_asked) == ("claude", "codex", True)
    assert agent.name == "claude"  # the records of this iteration name the agent that ran it
    book = LimitBook(str(home / LIMITS_FILE))
    marks = book.active(clock.now())
    assert list(marks) == [f"claude/login:{tmp_path / 'claude-config'}"]
    # until the reset plus usage_limit.margin_seconds (60 s): the vendor's clock and ours may differ
    assert marks[account_key(agent.agents[0])].until == datetime(2026, 11, 21, 2, 1, 20, tzinfo=UTC)
    codex_turn = agent.command(request())
    assert agent.name == "codex" and "-m" not in codex_turn.argv  # opus is claude's model, not codex's
    clock.advance(timedelta(hours=5).total_seconds())  # 01:00: still before claude's reset
    assert agent.command(request()).argv[1:3] == ("exec", "--json")
    clock.advance(timedelta(hours=1).total_seconds())  # 02:00:00, 80 s before it ends
    agent.command(request())
    assert agent.name == "codex"
    clock.advance(81)
    claude_turn = agent.command(request())
    assert agent.name == "claude" and "--model" in claude_turn.argv


def test_a_codex_result_is_not_checked_against_claudes_model(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    one_run(agent, CLAUDE_LIMIT, clock)
    result = one_run(agent, CODEX_OK, clock, session="claude-session")
    assert (result.agent, result.model_asked, result.failover_to) == ("codex", False, None)


def test_when_every_agent_is_limited_the_one_that_resets_first_runs_and_no_hand_over_is_offered(
    tmp_path: Path, home: Path
) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    assert one_run(agent, CLAUDE_LIMIT, clock).failover_to == "codex"
    last = one_run(agent, CODEX_LIMIT, clock)
    assert last.failover_to is None and last.usage_limit is not None  # the usage-limit policy takes it from here
    agent.command(request())
    assert agent.name == "codex"  # codex resets at 01:04, claude at 02:00:20


def test_a_failed_login_is_this_runs_alone_and_never_written_to_the_book(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    result = one_run(agent, CLAUDE_401, clock)
    assert result.failover_to == "codex"
    assert not (home / LIMITS_FILE).exists()
    clock.advance(86_400)
    agent.command(request())
    assert agent.name == "codex"  # claude stays out for the rest of this run
    fresh = chain(tmp_path, clock)
    assert fresh.name == "claude"  # another run tries it again


def test_a_mark_from_another_loop_is_honoured_and_a_later_one_replaces_it(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    book = LimitBook(str(home / LIMITS_FILE))
    key = f"claude/login:{tmp_path / 'claude-config'}"
    book.mark(key, Limited(START + timedelta(hours=1), "usage_limit", "elsewhere"), clock.now())
    book.mark("codex/other", Limited(START + timedelta(minutes=5), "usage_limit", "x"), clock.now())
    agent = chain(tmp_path, clock)
    assert agent.name == "codex"
    book.mark(key, Limited(START + timedelta(minutes=1), "usage_limit", "sooner"), clock.now())
    clock.advance(61)
    assert agent.command(request()) and agent.name == "claude"
    assert book.active(clock.now()) == {"codex/other": Limited(START + timedelta(minutes=5), "usage_limit", "x")}


@pytest.mark.parametrize(
    "text",
    [
        b"not json",
        b'{"schema_version": 2, "limits": {}}',
        b'{"schema_version": 1}',
        b'{"schema_version": 1, "limits": {"a": {"until": "2026-01-01T00:00:00"}}}',  # no time zone
        b'{"schema_version": 1, "limits": {"a": "tomorrow"}}',
        b"\xff\xfe",
    ],
)
def test_a_damaged_book_is_a_one_line_error_naming_it_and_is_left_as_it_is(
    tmp_path: Path, home: Path, text: bytes
) -> None:
    home.mkdir(parents=True)
    path = home / LIMITS_FILE
    path.write_bytes(text)
    with pytest.raises(RalphError) as caught:
        chain(tmp_path, FakeClock(start=START))
    assert str(caught.value).startswith(f"{path}: not a valid file of agent limits")
    assert "\n" not in str(caught.value) and path.read_bytes() == text


def test_the_book_keeps_only_marks_ahead_and_never_grows_past_its_cap(tmp_path: Path) -> None:
    book = LimitBook(str(tmp_path / LIMITS_FILE))
    for n in range(300):
        book.mark(f"agent/{n}", Limited(START + timedelta(minutes=n + 1), "usage_limit", "m" * 1000), START)
    marks = book.active(START)
    assert len(marks) == 256 and "agent/299" in marks and "agent/0" not in marks
    assert all(len(mark.message) == 300 for mark in marks.values())
    book.mark("agent/late", Limited(START + timedelta(days=1), "usage_limit", ""), START + timedelta(minutes=200))
    assert len(book.active(START + timedelta(minutes=200))) == 101


def test_a_limit_whose_reset_has_already_passed_still_hands_over_for_the_margin(tmp_path: Path, home: Path) -> None:
    """A vendor still saying "limited" just after its reset (or a reset read late): the next agent runs for the
    margin, then the first comes back; the limit is never ignored, which would call it again and again."""
    clock = FakeClock(start=datetime(2026, 11, 21, 3, 0, tzinfo=UTC))  # after claude's 02:00:20 reset
    agent = chain(tmp_path, clock)
    result = one_run(agent, CLAUDE_LIMIT, clock)
    assert result.usage_limit is not None and result.failover_to == "codex"
    [mark] = LimitBook(str(home / LIMITS_FILE)).active(clock.now()).values()
    assert mark.until == clock.now() + timedelta(seconds=60)
    agent.command(request())
    assert agent.name == "codex"
    clock.advance(61)
    agent.command(request())
    assert agent.name == "claude"


def test_when_every_agent_is_limited_the_wait_is_for_the_one_that_frees_first(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    book = LimitBook(str(home / LIMITS_FILE))
    claude_key = f"claude/login:{tmp_path / 'claude-config'}"
    book.mark(claude_key, Limited(START + timedelta(minutes=2), "usage_limit", "5-hour limit"), clock.now())
    agent = chain(tmp_path, clock)
    assert agent.name == "codex"  # claude is limited: codex first
    result = one_run(agent, CODEX_LIMIT, clock)  # codex resets at 01:04 tomorrow, claude in 2 minutes
    assert result.failover_to is None and result.usage_limit is not None
    assert result.usage_limit.resets_at == START + timedelta(minutes=2)  # what the policy waits for
    assert result.usage_limit.vendor == "claude" and "every agent of the list is limited, claude first" in (
        result.usage_limit.message
    )


def test_a_failed_login_while_the_other_agent_is_limited_waits_for_that_limit(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    assert one_run(agent, CLAUDE_LIMIT, clock).failover_to == "codex"
    result = one_run(agent, FIXTURES / "codex" / "mock_auth_401_json", clock)
    assert result.error_kind is ErrorKind.USAGE_LIMIT and result.usage_limit is not None  # a wait, not the stop
    assert result.usage_limit.resets_at == datetime(2026, 11, 21, 2, 1, 20, tzinfo=UTC)
    assert result.usage_limit.message.startswith("codex cannot work (Codex cannot authenticate")


def test_when_no_agent_can_log_in_the_stop_names_every_one_and_nobody_is_called_twice(
    tmp_path: Path, home: Path
) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    assert one_run(agent, CLAUDE_401, clock).failover_to == "codex"
    result = one_run(agent, FIXTURES / "codex" / "mock_auth_401_json", clock)
    assert result.error_kind is ErrorKind.AUTH and result.failover_to is None  # fatal: the run stops here
    assert result.error is not None and result.error.startswith("no agent of the list can work (claude: ")
    assert "; codex: Codex cannot authenticate" in result.error


def test_a_book_that_cannot_be_written_is_warned_about_and_this_run_still_knows(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock)
    warnings: list[str] = []
    agent.warn = warnings.append
    home.mkdir(parents=True, exist_ok=True)
    (home / (LIMITS_FILE + ".lock")).mkdir()  # the lock is a folder: the book cannot be written
    result = one_run(agent, CLAUDE_LIMIT, clock)
    assert result.failover_to == "codex"
    assert len(warnings) == 1 and "this run keeps the limit itself" in warnings[0]
    agent.command(request())
    assert agent.name == "codex"  # the limit held, from this run's memory


def test_a_limit_without_a_reset_is_kept_for_the_fallback_wait(tmp_path: Path, home: Path) -> None:
    clock = FakeClock(start=START)
    agent = chain(tmp_path, clock, names="codex,claude", model=None)
    capture = tmp_path / "later"
    capture.mkdir()
    for name in ("stderr", "rc"):
        (capture / name).write_bytes((CODEX_LIMIT / name).read_bytes())
    real = (CODEX_LIMIT / "stdout").read_text()
    (capture / "stdout").write_text(re.sub(r"or try again at [^.\"]*\.", "Try again later.", real))
    assert "Try again later." in (capture / "stdout").read_text()
    result = one_run(agent, capture, clock)
    assert result.failover_to == "claude"
    [mark] = LimitBook(str(home / LIMITS_FILE)).active(clock.now()).values()
    assert mark.until == START + timedelta(minutes=30)  # usage_limit.fallback_wait_minutes


def test_a_stuck_lock_on_the_book_is_an_error_after_a_bounded_wait_never_a_hang(tmp_path: Path) -> None:
    import fcntl
    import os

    from ralphloop.files.store import held

    lock = tmp_path / "agent-limits.json.lock"
    holder = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another open file: as another process holding it
    try:
        with pytest.raises(OSError, match="another process has held"), held(str(lock), wait_s=0.05):
            pass
    finally:
        os.close(holder)
    with held(str(lock), wait_s=0.05):  # free again: taken at once
        pass


def test_an_account_is_one_key_however_its_folder_is_spelled() -> None:
    from ralphloop.agents.accounts import account_of

    assert account_of({}, (), "/x/y/") == account_of({}, (), "/x//y") == "login:/x/y"
