"""The Claude backend through the real `ralph run`, with a stand-in `claude` that replays real runs.

tests/agents/replay_claude.py plays, one per invocation, whole runs of the real CLI (tests/fixtures/claude/runs/):
a 529, a 401, a lost session ... `claude.command` in .ralph/config.yaml points at it, and it records the
arguments ralph passed. The real CLI against a loopback API is in tests/e2e/.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.integration import replays
from tests.integration.helpers import entry_fields, progress_entries, snapshot

SESSION = "dfcd3ba6-d912-4605-9117-fd870b38f922"  # the session id in claude_mock_tool_streamjson


class Replay(replays.Replay):
    CLI = "claude"


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def run(ralph: RalphRunner, *args: str, **env: str) -> Any:
    return ralph("run", "-f", "feat", "--on-usage-limit", "exit", *args, env=env or None)


def test_claude_is_the_default_agent_with_the_stream_json_invocation(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "--no-archive")  # the feature's records are read below, where they are
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert len(calls) == 3
    # permissions: edits by default, Claude Code's acceptEdits mode
    assert calls[0]["args"] == ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"]
    assert all(call["stdin_bytes"] > 500 for call in calls)  # the prompt went on stdin, not in argv
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("claude", "complete")
    assert status["sessionId"] == SESSION and status["model"] == "claude-sonnet-4-5-20250929"


def test_config_flags_reach_the_cli_and_permissions_are_never_skipped_unasked(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    extra = (
        '  allowed_tools: "Write,Bash(git commit -m a,b),Read"\n'
        "  max_turns: 12\n"
        '  append_system_prompt: "Keep commits small; say $HOME literally."\n'
    )
    replay.configure(project, extra)
    done = run(ralph, "-n", "1", "--model", "sonnet")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    args = replay.calls()[0]["args"]
    assert args == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "sonnet",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Write,Bash(git commit -m a,b),Read",
        "--max-turns",
        "12",
        "--append-system-prompt",
        "Keep commits small; say $HOME literally.",
    ]
    assert "--dangerously-skip-permissions" not in args and "--resume" not in args


def test_each_permissions_level_maps_to_claude_codes_own_flags(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    asked = run(ralph, "-n", "1", "--permissions", "ask")
    assert asked.returncode in (0, 1), asked.stdout + asked.stderr
    flags = {"--permission-mode", "acceptEdits", "--dangerously-skip-permissions"}
    assert not flags & set(replay.calls()[-1]["args"])  # ask: the CLI's own rules, nothing added
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "permissions: ask\n")
    dry = run(ralph, "--dry-run", "--permissions", "edits")
    assert "# Permissions: edits (from --permissions)" in dry.stdout
    assert "--permission-mode acceptEdits" in dry.stdout
    dry = run(ralph, "--dry-run")
    assert "# Permissions: ask (from .ralph/config.yaml (permissions))" in dry.stdout
    bad = run(ralph, "--dry-run", RALPH_PERMISSIONS="everything")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == "ralph: error: environment variable RALPH_PERMISSIONS: expected one of ask, edits, all"


def test_skip_permissions_only_when_asked_and_refused_clearly_as_root(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    before = snapshot(project)
    if os.geteuid() == 0:
        refused = run(ralph, "--dangerously-skip-permissions")
        assert refused.returncode == 1
        assert "refuses --dangerously-skip-permissions when run as root" in refused.stderr
        assert "IS_SANDBOX=1" in refused.stderr and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert replay.calls() == [] and snapshot(project) == before
        done = run(ralph, "--dangerously-skip-permissions", IS_SANDBOX="1")
    else:
        done = run(ralph, "--dangerously-skip-permissions")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all("--dangerously-skip-permissions" in call["args"] for call in replay.calls())
    assert all("--permission-mode" not in call["args"] for call in replay.calls())


def test_an_overloaded_api_is_retried_without_counting_the_iteration(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(
        tmp_path,
        ["claude_mock_overloaded_529_streamjson", "claude_streamjson_fakekey_nonet_retries2", "work"],
    )
    replay.configure(project)
    done = run(ralph, "-n", "1")  # one counted iteration is enough: the two API failures are not counted
    assert done.returncode == 1, done.stdout + done.stderr  # max_iterations: two stories remain
    logged = entries(feature)
    assert [entry["Status"] for entry in logged] == ["api-error", "api-error", "complete"]
    assert "529 Overloaded" in logged[0]["Note"] and "not counted" in logged[0]["Note"]
    assert "Can't reach the API server" in logged[1]["Note"]
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations" and status["storiesComplete"] == 1
    breaker = read_json(feature / ".circuit_breaker_state")
    assert breaker["consecutive_failures"] == 0  # the API's failures are not the task's
    assert "retrying in 0s (attempt 1/10)" in done.stdout


def test_an_api_that_stays_down_stops_after_the_backoff_attempts(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["claude_mock_server_500_streamjson"])
    replay.configure(project, backoff="initial_seconds: 0\n  attempts: 2")
    done = run(ralph)
    assert done.returncode == 1
    assert len(replay.calls()) == 3  # the first try and two retries
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    assert "500 Internal server error" in status["exitMessage"]
    assert status["exitMessage"].endswith("(still failing after 2 retries)")


@pytest.mark.parametrize(
    ("run_name", "words"),
    [
        ("claude_mock_auth_401_streamjson", ["cannot authenticate", "Invalid API key", "ANTHROPIC_API_KEY"]),
        ("claude_streamjson_noauth", ["cannot authenticate", "Not logged in", "/login"]),
        ("claude_mock_bad_model_404_streamjson", ["model is not available", "--model"]),
        ("claude_mock_credit_400_streamjson", ["Credit balance is too low", "add credits"]),
    ],
)
def test_an_agent_that_cannot_work_stops_the_loop_at_once_with_the_fix(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, run_name: str, words: list[str]
) -> None:
    replay = Replay(tmp_path, [run_name])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1
    assert len(replay.calls()) == 1
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    for word in words:
        assert word in status["exitMessage"], status["exitMessage"]
        assert word in done.stdout
    assert status["retryCount"] == 0  # not a failed attempt at the task: nothing was undone or retried
    breaker = read_json(feature / ".circuit_breaker_state")
    assert (breaker["state"], breaker["consecutive_failures"]) == ("CLOSED", 0)


def test_max_turns_is_a_failed_attempt_that_is_retried(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["claude_mock_tool_maxturns1", "work"])
    replay.configure(project, "  max_turns: 1\n")
    done = run(ralph, "-n", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    text = (feature / "progress.txt").read_text()
    reason = "Claude Code ran out of turns (claude.max_turns: 1): Reached maximum number of turns (1)"
    assert f"[FAIL] S-1 - {reason}" in text
    assert "(attempt 1/3)" in text
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete"]


def test_resume_continues_the_last_session_and_a_lost_one_runs_fresh_once(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work", "claude_resume_invalid", "work"])
    replay.configure(project, "  resume: true\n")
    done = run(ralph, "-n", "2")
    assert done.returncode == 1, done.stdout + done.stderr  # two of three stories: max_iterations
    calls = [call["args"] for call in replay.calls()]
    assert len(calls) == 3
    assert "--resume" not in calls[0]  # nothing to resume yet
    assert calls[1][-2:] == ["--resume", SESSION]
    assert "--resume" not in calls[2]  # the lost session is dropped and the iteration runs fresh
    assert [entry["Status"] for entry in entries(feature)] == ["complete", "complete"]
    assert "the session to resume is gone" in done.stdout
    log = (feature / "logs" / "iteration-2.log").read_text()
    assert "running again in a fresh session" in log
    assert read_json(feature / "state.json")["session_id"] == SESSION


def test_without_resume_every_iteration_is_a_fresh_session(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    assert run(ralph).returncode == 0
    assert all("--resume" not in call["args"] for call in replay.calls())


def test_a_claude_command_that_does_not_exist_is_a_one_line_error(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nclaude:\n  command: /nowhere/claude\n")
    before = snapshot(project)
    done = run(ralph)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "ralph: error: .ralph/config.yaml (claude.command): '/nowhere/claude' is not an executable on PATH "
        "or a path to one"
    )
    assert snapshot(project) == before


def test_a_bad_claude_setting_names_the_key(project: Path, feature: Path, ralph: RalphRunner) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nclaude:\n  max_turns: lots\n")
    done = run(ralph)
    assert done.returncode == 1
    assert done.stderr.strip() == "ralph: error: .ralph/config.yaml: claude.max_turns: 'lots' is not a whole number"
