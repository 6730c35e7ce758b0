"""The Claude backend in-process: runs built as `ralph run` builds them, the Claude Code CLI's real runs
(tests/fixtures/claude/runs/: a 529, a 401, a lost session ...) played through the replay runner into the real
backend's parser (harness_backends.py). What ralph asks of the CLI is the launch's: its argv, environment and stdin.

The CLI's side (the default agent through a real `claude` stand-in, a missing or badly set command's error line, a
bad RALPH_PERMISSIONS, the refusal to skip permissions as root) is tests/integration/test_claude_backend.py's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from tests.conftest import read_json
from tests.engine.harness import entries, run
from tests.engine.harness_backends import add_config, dry_run, exiting, ready, replays

SESSION = "dfcd3ba6-d912-4605-9117-fd870b38f922"  # the session id in claude_mock_tool_streamjson


def args(launch: Launch) -> list[str]:
    """What the CLI was given after its name."""
    return list(launch.command.argv[1:])


@pytest.fixture
def claude(project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The feature, `claude` found, and no backoff wait."""
    ready(project, tmp_path, monkeypatch, "claude")
    return feature


def test_claude_is_the_default_agent_with_the_stream_json_invocation(project: Path, claude: Path) -> None:
    agent = replays("claude", "work")

    done = run(project, agent, backend=None, flags=exiting())

    assert done.outcome.reason is ExitReason.COMPLETE
    assert len(agent.launches) == 3
    # permissions: edits by default, Claude Code's acceptEdits mode
    assert args(agent.launches[0]) == [
        "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
    ]  # fmt: skip
    assert all(len(launch.command.stdin) > 500 for launch in agent.launches)  # the prompt on stdin, not in argv
    status = read_json(claude / "status.json")
    assert (status["agent"], status["exitReason"]) == ("claude", "complete")
    assert status["sessionId"] == SESSION and status["model"] == "claude-sonnet-4-5-20250929"


def test_config_flags_reach_the_cli_and_permissions_are_never_skipped_unasked(project: Path, claude: Path) -> None:
    add_config(
        project,
        "claude:\n"
        '  allowed_tools: "Write,Bash(git commit -m a,b),Read"\n'
        "  max_turns: 12\n"
        '  append_system_prompt: "Keep commits small; say $HOME literally."\n',
    )
    agent = replays("claude", "work")

    done = run(project, agent, backend=None, n=1, flags=exiting(model=("sonnet", "--model")))

    assert done.outcome.reason in (ExitReason.COMPLETE, ExitReason.MAX_ITERATIONS)
    given = args(agent.launches[0])
    assert given == [
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
    assert "--dangerously-skip-permissions" not in given and "--resume" not in given


def test_each_permissions_level_maps_to_claude_codes_own_flags(project: Path, claude: Path) -> None:
    agent = replays("claude", "work")

    asked = run(project, agent, backend=None, n=1, flags=exiting(permissions=("ask", "--permissions")))

    assert asked.outcome.reason in (ExitReason.COMPLETE, ExitReason.MAX_ITERATIONS)
    skipping = {"--permission-mode", "acceptEdits", "--dangerously-skip-permissions"}
    assert not skipping & set(args(agent.launches[-1]))  # ask: the CLI's own rules, nothing added
    add_config(project, "permissions: ask\n")
    shown = dry_run(project, backend=None, flags=exiting(permissions=("edits", "--permissions")))
    assert "# Permissions: edits (from --permissions)" in shown
    assert "--permission-mode acceptEdits" in shown
    assert "# Permissions: ask (from .ralph/config.yaml (permissions))" in dry_run(
        project, backend=None, flags=exiting()
    )


def test_skip_permissions_only_when_asked(project: Path, claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:  # Claude Code refuses the flag as root but in a sandbox (the CLI's refusal: integration)
        monkeypatch.setenv("IS_SANDBOX", "1")
    agent = replays("claude", "work")

    done = run(project, agent, backend=None, flags=exiting(permissions=("all", "--dangerously-skip-permissions")))

    assert done.outcome.reason is ExitReason.COMPLETE
    assert all("--dangerously-skip-permissions" in args(launch) for launch in agent.launches)
    assert all("--permission-mode" not in args(launch) for launch in agent.launches)


def test_an_overloaded_api_is_retried_without_counting_the_iteration(project: Path, claude: Path) -> None:
    agent = replays(
        "claude", "claude_mock_overloaded_529_streamjson", "claude_streamjson_fakekey_nonet_retries2", "work"
    )

    done = run(project, agent, backend=None, n=1, flags=exiting())  # the two API failures are not counted

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS  # two stories remain
    logged = entries(claude)
    assert [entry["Status"] for entry in logged] == ["api-error", "api-error", "complete"]
    assert "529 Overloaded" in logged[0]["Note"] and "not counted" in logged[0]["Note"]
    assert "Can't reach the API server" in logged[1]["Note"]
    status = read_json(claude / "status.json")
    assert status["exitReason"] == "max_iterations" and status["storiesComplete"] == 1
    breaker = read_json(claude / ".circuit_breaker_state")
    assert breaker["consecutive_failures"] == 0  # the API's failures are not the task's
    assert "retrying in 0s (attempt 1/10)" in done.screen


def test_an_api_that_stays_down_stops_after_the_backoff_attempts(project: Path, feature: Path) -> None:
    add_config(project, "backoff:\n  initial_seconds: 0\n  attempts: 2\n")
    agent = replays("claude", "claude_mock_server_500_streamjson")

    done = run(project, agent, backend=None, flags=exiting())

    assert done.outcome.reason is ExitReason.AGENT_ERROR and done.outcome.reason.exit_code == 1
    assert len(agent.launches) == 3  # the first try and two retries
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
    project: Path, claude: Path, run_name: str, words: list[str]
) -> None:
    agent = replays("claude", run_name)

    done = run(project, agent, backend=None, flags=exiting())

    assert done.outcome.reason.exit_code == 1
    assert len(agent.launches) == 1
    status = read_json(claude / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    for word in words:
        assert word in status["exitMessage"], status["exitMessage"]
        assert word in done.screen
    assert status["retryCount"] == 0  # not a failed attempt at the task: nothing was undone or retried
    breaker = read_json(claude / ".circuit_breaker_state")
    assert (breaker["state"], breaker["consecutive_failures"]) == ("CLOSED", 0)


def test_max_turns_is_a_failed_attempt_that_is_retried(project: Path, claude: Path) -> None:
    add_config(project, "claude:\n  max_turns: 1\n")
    agent = replays("claude", "claude_mock_tool_maxturns1", "work")

    done = run(project, agent, backend=None, n=2, flags=exiting())

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    text = (claude / "progress.txt").read_text()
    reason = "Claude Code ran out of turns (claude.max_turns: 1): Reached maximum number of turns (1)"
    assert f"[FAIL] S-1 - {reason}" in text
    assert "(attempt 1/3)" in text
    assert [entry["Status"] for entry in entries(claude)] == ["failed", "complete"]


def test_resume_continues_the_last_session_and_a_lost_one_runs_fresh_once(project: Path, claude: Path) -> None:
    add_config(project, "claude:\n  resume: true\n")
    agent = replays("claude", "work", "claude_resume_invalid", "work")

    done = run(project, agent, backend=None, n=2, flags=exiting())

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS  # two of three stories
    calls = [args(launch) for launch in agent.launches]
    assert len(calls) == 3
    assert "--resume" not in calls[0]  # nothing to resume yet
    assert calls[1][-2:] == ["--resume", SESSION]
    assert "--resume" not in calls[2]  # the lost session is dropped and the iteration runs fresh
    assert [entry["Status"] for entry in entries(claude)] == ["complete", "complete"]
    assert "the session to resume is gone" in done.screen
    log = (claude / "logs" / "iteration-2.log").read_text()
    assert "running again in a fresh session" in log
    assert read_json(claude / "state.json")["session_id"] == SESSION


def test_without_resume_every_iteration_is_a_fresh_session(project: Path, claude: Path) -> None:
    agent = replays("claude", "work")

    done = run(project, agent, backend=None, flags=exiting())

    assert done.outcome.reason.exit_code == 0
    assert all("--resume" not in args(launch) for launch in agent.launches)
