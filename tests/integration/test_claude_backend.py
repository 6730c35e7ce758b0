"""The Claude backend at the CLI's edge: the real `ralph run`, with a stand-in `claude` that replays real runs.

tests/agents/replay_claude.py plays, one per invocation, whole runs of the real CLI (tests/fixtures/claude/runs/);
`claude.command` in .ralph/config.yaml points at it, and it records the arguments ralph passed. What the backend
decides and records (the flags it passes, the API's failures retried or stopped at, max turns, resume) is
tests/engine/test_claude_backend.py's, in-process. Here: one run end to end through a real process, and the one-line
errors. The real CLI against a loopback API is in tests/e2e/.
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


def test_a_bad_permissions_variable_is_one_line_naming_it(project: Path, feature: Path, ralph: RalphRunner) -> None:
    bad = run(ralph, "--dry-run", RALPH_PERMISSIONS="everything")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == "ralph: error: environment variable RALPH_PERMISSIONS: expected one of ask, edits, all"


@pytest.mark.skipif(os.geteuid() != 0, reason="Claude Code refuses to skip permissions only as root")
def test_skip_permissions_is_refused_clearly_as_root(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    before = snapshot(project)
    refused = run(ralph, "--dangerously-skip-permissions")
    assert refused.returncode == 1
    assert "refuses --dangerously-skip-permissions when run as root" in refused.stderr
    assert "IS_SANDBOX=1" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert replay.calls() == [] and snapshot(project) == before
    done = run(ralph, "--dangerously-skip-permissions", IS_SANDBOX="1")  # in a sandbox: the flag reaches the CLI
    assert done.returncode == 0, done.stdout + done.stderr
    assert all("--dangerously-skip-permissions" in call["args"] for call in replay.calls())


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
