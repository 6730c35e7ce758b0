"""`ralph run --agent cursor` through the real CLI, with tests/agents/replay_cursor.py as `cursor.command`: it replays
runs built from Cursor's documentation, with stderr texts of real runs from public bug reports
(tests/fixtures/cursor/), byte for byte, and records how ralph called it. No Cursor CLI can be installed here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import RalphRunner, read_json
from tests.integration import replays


class Replay(replays.Replay):
    CLI = "cursor"


def run(ralph: RalphRunner, *args: str) -> subprocess.CompletedProcess[str]:
    return ralph("run", "-f", "feat", "--agent", "cursor", *args)


def test_cursor_runs_print_mode_with_the_prompt_left_in_its_file(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work:built_tool_complete"])
    replay.configure(project)
    done = run(ralph, "--no-archive")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert len(calls) == 3
    args = calls[0]["args"]
    assert args[:4] == ["-p", "--output-format", "stream-json", "--trust"] and len(args) == 5
    # The prompt stays in its file: the argument names it, the file was there with the prompt when Cursor ran.
    (path, size), *_ = calls[0]["prompt_files"].items()
    assert path in args[-1] and size is not None and size > 500 and len(args[-1]) < 400
    assert calls[0]["stdin_bytes"] == 0
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("cursor", "complete")
    first = replays.metrics(feature)[0]
    assert first["agent"] == "cursor" and first["model"] == "Claude 4 Sonnet"
    assert first["cost_usd"] is None  # Cursor reports no cost and no tokens: none recorded
    assert all(value is None for value in first["usage"].values())  # unknown, not zero


def test_the_model_and_each_permission_level_map_to_cursors_flags(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work:built_tool_complete"])
    replay.configure(project)
    for extra in ([], ["--permissions", "all", "--model", "sonnet-4", "--poorman"], ["--permissions", "ask"]):
        done = run(ralph, "-n", "1", *extra)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    default, everything, ask = (call["args"][4:-1] for call in replay.calls())
    assert default == []
    assert everything == ["--model", "sonnet-4", "--force"]
    assert ask == ["--mode", "ask"]


def test_the_monthly_usage_limit_is_not_waited_for(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["report_usage_limit"])
    replay.configure(project)
    done = run(ralph, "--on-usage-limit", "wait")  # even where ralph would wait for a usage limit
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "11/17/2025" in said and "not worth waiting for" in said
    assert len(replay.calls()) == 1
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "agent_error" and not status.get("usageLimit")


def test_not_logged_in_stops_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["report_auth_required"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1 and "cursor-agent login" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_a_dry_run_says_where_the_prompt_is(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["built_tool_complete"])
    replay.configure(project)
    dry = run(ralph, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    where = str(feature / "logs" / "iteration-1.prompt.md")
    assert f"prompt in {where}): " in dry.stdout and "prompt on stdin" not in dry.stdout
    assert replay.calls() == []


def test_ralph_analyze_reads_a_cursor_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-1.log"
    log.write_bytes((replays.FIXTURES / "cursor" / "built_tool_complete" / "stdout").read_bytes())
    for args in (["--agent", "cursor"], []):
        done = ralph("analyze", *args, "--json", str(log))
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["format"] == "cursor-stream-json" and body["completion_claimed"] is True
