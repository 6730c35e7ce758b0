"""`ralph run --agent codex` through the real CLI, with tests/agents/replay_codex.py as `codex.command`: it replays
real Codex 0.169.0 runs (tests/fixtures/codex/) byte for byte and records the arguments ralph passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json, write_prd
from tests.integration import replays
from tests.integration.helpers import git


class Replay(replays.Replay):
    CLI = "codex"


def run(ralph: RalphRunner, *args: str) -> Any:
    return ralph("run", "-f", "feat", "--agent", "codex", "--on-usage-limit", "exit", *args)


def test_codex_runs_exec_json_with_the_prompt_on_stdin_and_reports_tokens_and_cost(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "--no-archive", "--model", "gpt-5.1-codex")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert calls[0]["args"] == [
        "exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.1-codex", "-s", "workspace-write", "-"
    ]  # fmt: skip
    assert all(call["stdin_bytes"] > 500 and call["tz"] == "UTC" for call in calls)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("codex", "complete")
    metrics = [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    first = metrics[0]
    assert first["model"] == "gpt-5.1-codex" and first["agent"] == "codex"
    assert first["usage"]["input_tokens"] == 1000 and first["usage"]["cache_read_tokens"] == 2000
    assert first["usage"]["output_tokens"] == 50
    assert first["cost_usd"] == round((1000 * 1.25 + 2000 * 0.125 + 50 * 10.0) / 1e6, 6)


def test_permissions_are_bypassed_only_when_asked(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "-n", "1", "--dangerously-skip-permissions")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    args = replay.calls()[0]["args"]
    assert "--dangerously-bypass-approvals-and-sandbox" in args and "-s" not in args and args[-1] == "-"


def test_the_usage_limit_stops_the_run_with_its_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_usage_limit_plus_json"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 2, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    limit = status["usageLimit"]
    assert limit["vendor"] == "codex" and limit["resetsAt"] == "2026-11-21T01:04:00Z"


def test_an_expired_key_stops_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["mock_auth_401_json"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1
    assert "codex login" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_ralph_analyze_reads_a_codex_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-3.log"
    log.write_bytes((Path(__file__).parent.parent / "fixtures" / "codex" / "mock_ok_json" / "stdout").read_bytes())
    done = ralph("analyze", "--agent", "codex", "--json", str(log))
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["format"] == "codex-json" and body["completion_claimed"] is True


@pytest.mark.parametrize("auto_commit", [None, False])
def test_ralph_commits_for_codex_whose_sandbox_keeps_git_read_only_unless_told_not_to(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    tmp_path: Path,
    ralph_env: dict[str, str],
    auto_commit: bool | None,
) -> None:
    write_prd(feature, 1)
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    config = project / ".ralph" / "config.yaml"
    if auto_commit is not None:
        config.write_text(config.read_text() + "git:\n  auto_commit: false\n")
    dry = run(ralph, "--dry-run")
    said = "# Auto-commit: each iteration's changes are committed (the default for this task format or agent)"
    assert (said in dry.stdout) is (auto_commit is None)
    done = run(ralph, "--no-archive")
    assert done.returncode == 0, done.stdout + done.stderr
    subjects = git(project, ralph_env, "log", "--format=%s").splitlines()
    if auto_commit is None:  # ralph's commit of the story codex did, over the initial one
        assert len(subjects) == 2 and "S-1" in subjects[0]
    else:  # the user said no: the work is left in the working tree
        assert subjects == ["initial"] and (project / "work-S-1.txt").exists()
    # --permissions all lets codex run git itself: ralph leaves the commits to it
    assert "# Auto-commit" not in run(ralph, "--dry-run", "--permissions", "all").stdout


def test_claudes_own_skip_switch_gives_codex_nothing_and_contradicting_flags_are_refused(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "claude:\n  dangerously_skip_permissions: true\n")
    dry = run(ralph, "--dry-run")
    assert "-s workspace-write" in dry.stdout and "--dangerously-bypass" not in dry.stdout
    assert "# Permissions: edits (from default)" in dry.stdout
    claude = ralph("run", "-f", "feat", "--dry-run", "--agent", "claude", env={"IS_SANDBOX": "1"})
    assert "# Permissions: all (from .ralph/config.yaml (claude.dangerously_skip_permissions))" in claude.stdout
    before = (feature / "prd.json").read_bytes()
    both = run(ralph, "--permissions", "ask", "--dangerously-skip-permissions")
    assert both.returncode != 0 and "Traceback" not in both.stderr
    assert both.stderr.strip() == (
        "ralph: error: --permissions ask and --dangerously-skip-permissions contradict each other: give one"
    )
    assert replay.calls() == [] and (feature / "prd.json").read_bytes() == before
