"""Vendor usage limits end to end: real `ralph run`, real agent processes printing the CLIs' own limit sentences.

A usage-limited iteration is not a failure: no retry, no saved attempt, nothing for the breaker. With the
`exit` policy the run stops with exit code 2 and status.json says when the limit resets; without a terminal
the default is to wait for the reset.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from ralphloop.words.figures import local_time
from tests.conftest import AGENTS, PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import entry_fields, git, progress_entries, set_config, wait_until

FIXTURES = Path(__file__).parent.parent / "fixtures"
IN_AN_HOUR = int((datetime.now(UTC) + timedelta(hours=1)).timestamp())
EPOCH_TEXT = f"Claude AI usage limit reached|{IN_AN_HOUR}"
FIVE_HOUR_TEXT = "You've hit your 5-hour limit · resets 8pm (America/New_York)"
EXTRA_USAGE_TEXT = "You’re out of extra usage · resets 9pm (Europe/Berlin)"  # frankbria/ralph-claude-code#100


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def limited(text: str) -> dict[str, Any]:
    """An iteration that starts some work, then hits the limit: the sentence on stderr, exit 1."""
    return {"write": {"partial.txt": "started {n}\n"}, "say_err": text, "exit": 1}


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def parse_z(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def assert_stopped_at_the_limit(
    feature: Path, done: subprocess.CompletedProcess[str], limited_iteration: int
) -> dict[str, Any]:
    assert done.returncode == 2, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert limit["vendor"] == "claude"
    assert limit["policy"] == "exit"
    assert limit["resetsAt"] is not None
    resets = datetime.fromisoformat(limit["resetsAt"].replace("Z", "+00:00"))
    assert f"The usage limit resets at {local_time(resets)}" in status["guidance"]  # on screen: the local time
    entry = entries(feature)[limited_iteration - 1]
    assert entry["Status"] == "usage-limit"
    assert "usage limit (claude)" in entry["Note"] and "not counted as an iteration" in entry["Note"], entry
    assert not (feature / "logs" / f"iteration-{limited_iteration + 1}.log").exists()
    status_value: dict[str, Any] = status
    return status_value


@pytest.mark.parametrize(
    "text", [EPOCH_TEXT, FIVE_HOUR_TEXT, EXTRA_USAGE_TEXT], ids=["epoch", "five-hour", "extra-usage"]
)
def test_exit_policy_stops_with_code_2_and_counts_nothing(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, text: str
) -> None:
    # Iteration 1 fails for real (counted: attempt 1, one failure for the breaker); iteration 2 hits the limit.
    plan = {"1": {"say_err": "Error: flaky network", "exit": 1}, "2": limited(text)}
    before = datetime.now(UTC)

    done = ralph("run", "-n", "5", "--on-usage-limit", "exit", "--agent-cmd", steps(tmp_path, plan))

    status = assert_stopped_at_the_limit(feature, done, limited_iteration=2)
    resets = parse_z(status["usageLimit"]["resetsAt"])
    if text == EPOCH_TEXT:
        assert resets == datetime.fromtimestamp(IN_AN_HOUR, UTC)
        assert status["usageLimit"]["message"] == "Claude AI usage limit reached"
    else:
        kind, zone = ("five_hour", "America/New_York") if text == FIVE_HOUR_TEXT else ("extra_usage", "Europe/Berlin")
        assert status["usageLimit"]["kind"] == kind
        assert status["usageLimit"]["message"] == text
        there = resets.astimezone(ZoneInfo(zone))
        assert (there.hour, there.minute) == ((20, 0) if text == FIVE_HOUR_TEXT else (21, 0))
        assert before - timedelta(minutes=5) <= resets <= before + timedelta(days=1)
    # Not a failed attempt: the retry count is the first failure's, and only that one has a [FAIL] line.
    assert status["retryCount"] == 1
    fail_lines = [line for line in (feature / "progress.txt").read_text().splitlines() if line.startswith("[FAIL]")]
    assert len(fail_lines) == 1, fail_lines
    assert fail_lines[0].startswith("[FAIL] S-1 - exit code 1: Error: flaky network")
    assert fail_lines[0].endswith("(attempt 1/3)")
    # Not for the breaker: its counters are as iteration 1 left them (the limited iteration was never saved).
    breaker = read_json(feature / ".circuit_breaker_state")
    assert (breaker["consecutive_failures"], breaker["consecutive_no_progress"]) == (1, 0)
    assert breaker["current_loop"] == 1
    # Its partial work is saved and undone, as a call that did not count always is: the retry after the reset
    # starts where this call started, and nothing it half did is left uncommitted or done twice.
    refs = git(project, ralph_env, "for-each-ref", "--format=%(refname)", "refs/ralph/").split()
    assert refs == ["refs/ralph/attempts/feat/iteration-2"]
    assert (feature / "logs" / "iteration-2.patch").exists()
    assert not (project / "partial.txt").exists()
    saved = git(project, ralph_env, "show", "refs/ralph/attempts/feat/iteration-2:partial.txt")
    assert saved == "started 2\n"


@pytest.mark.parametrize("where", ["environment", "config"])
def test_exit_policy_from_the_environment_or_the_config(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, where: str
) -> None:
    env = {}
    if where == "environment":
        env["RALPH_ON_USAGE_LIMIT"] = "exit"  # over the config's `policy: ask`
    else:
        set_config(project, "policy: ask ", "policy: exit")

    done = ralph("run", "-n", "5", "--agent-cmd", steps(tmp_path, {"*": limited(EPOCH_TEXT)}), env=env)

    status = assert_stopped_at_the_limit(feature, done, limited_iteration=1)
    assert status["usageLimit"]["resetsAt"] == datetime.fromtimestamp(IN_AN_HOUR, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert status["retryCount"] == 0
    assert status["circuitState"] == "CLOSED"
    breaker = read_json(feature / ".circuit_breaker_state")  # nothing was counted
    assert (breaker["consecutive_failures"], breaker["consecutive_no_progress"], breaker["current_loop"]) == (0, 0, 0)


def replay_claude(tmp_path: Path, ralph_env: dict[str, str], capture: Path) -> dict[str, str]:
    """The environment for a `claude` on PATH that prints `capture` (a real stream-json run) and exits 1."""
    folder = tmp_path / "bin"
    folder.mkdir()
    claude = folder / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "claude_costs.py"}" "$@"\n')
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}{os.pathsep}{ralph_env['PATH']}", "FAKE_CLAUDE_REPLAY": str(capture)}


# A captured Claude Code run at its 5-hour limit: a rate_limit_event (rejected, resetsAt 1795226420 =
# 2026-11-21T02:00:20Z), then the synthetic assistant and result events saying "· resets 2am (UTC)".
OAUTH_5H = FIXTURES / "usage" / "claude_stream_oauth_5h_utc.jsonl"


def test_a_real_claude_stream_that_hit_its_limit_stops_with_code_2(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    env = replay_claude(tmp_path, ralph_env, OAUTH_5H)

    done = ralph("run", "-n", "3", "--agent", "claude", "--on-usage-limit", "exit", env=env)

    status = assert_stopped_at_the_limit(feature, done, limited_iteration=1)
    assert status["agent"] == "claude"
    assert status["usageLimit"]["message"] == "You've hit your 5-hour limit · resets 2am (UTC)"
    resets = parse_z(status["usageLimit"]["resetsAt"])
    assert (resets.hour, resets.minute) == (2, 0)  # 2am UTC (the day depends on today's date)
    assert status["retryCount"] == 0


def test_the_exact_reset_of_the_rate_limit_event_wins_over_the_sentence(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    env = replay_claude(tmp_path, ralph_env, OAUTH_5H)

    done = ralph("run", "-n", "3", "--agent", "claude", "--on-usage-limit", "exit", env=env)

    assert done.returncode == 2, done.stdout + done.stderr
    assert read_json(feature / "status.json")["usageLimit"]["resetsAt"] == "2026-11-21T02:00:20Z"


def test_without_a_terminal_the_default_is_to_wait_for_the_reset(
    feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path
) -> None:
    proc = background.ralph("run", "-n", "3", "--agent-cmd", steps(tmp_path, {"*": limited(EPOCH_TEXT)}))

    def waiting() -> bool:
        try:
            return read_json(feature / "status.json").get("waiting") is not None
        except (FileNotFoundError, json.JSONDecodeError):
            return False

    assert wait_until(lambda: waiting() or proc.poll() is not None), "no wait"
    assert proc.poll() is None, proc.communicate(timeout=30)
    status = read_json(feature / "status.json")
    assert status["waiting"]["kind"] == "usage limit"
    # Until the reset plus the 60 s margin.
    assert parse_z(status["waiting"]["until"]) >= datetime.fromtimestamp(IN_AN_HOUR + 59, UTC)
    assert status["usageLimit"]["policy"] == "wait"
    assert entries(feature)[0]["Status"] == "usage-limit"
    # While it waits the run holds its lock: a reset cannot write under it.
    refused = ralph("reset-circuit", "-f", "feat")
    assert refused.returncode == 1 and "already running" in refused.stderr, refused.stdout + refused.stderr

    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stdout + stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["waiting"]) == ("interrupted", None)
    assert not (feature / "logs" / "iteration-2.log").exists()
