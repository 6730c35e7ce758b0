"""A parallel run paced against the user's caps on usage windows (issue 34), with real processes: the coordinator
reads the book of windows every loop of the user shares (here written as another loop on the account left it) and
starts no loop while the account is past a cap; with `--on-usage-limit exit` it stops, exit 2, reason usage_window."""

from __future__ import annotations

import json
import signal
from datetime import datetime, timedelta
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import parallel_feature, start_parallel, wait_until


def _story(number: int) -> dict[str, object]:
    return {"id": f"S-{number}", "title": f"Story {number}", "priority": number, "passes": False}


def test_no_loop_starts_past_a_cap_and_the_run_stops_with_exit_2(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = parallel_feature(project, ralph_env, [_story(n) for n in (1, 2, 3)])
    called = tmp_path / "called"
    claude = tmp_path / "claude"  # never to run: the cap holds every loop before any call
    claude.write_text(f"#!/bin/sh\necho called >> {called}\nexit 1\n")
    claude.chmod(0o755)
    config = tmp_path / "claude-config"
    account = f"claude/login:{config}"
    home = Path(ralph_env["RALPH_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    window = {"utilization": 0.6, "resetsAt": "2100-01-01T00:00:00Z", "readAt": "2026-12-06T22:00:00Z"}
    book = {"schema_version": 1, "limits": {}, "windows": {account: {"five_hour": window}}}
    (home / "agent-limits.json").write_text(json.dumps(book))
    env = {"RALPH_CLAUDE_COMMAND": str(claude), "CLAUDE_CONFIG_DIR": str(config)}

    done = ralph(
        "run", "--parallel", "2", "--agent", "claude", "--max-window", "five_hour=50%", "--on-usage-limit", "exit",
        env=env,
    )  # fmt: skip

    assert done.returncode == 2, done.stdout + done.stderr
    assert "claude's 5-hour window is 60% used, at or past your cap of 50%" in done.stdout
    assert "Stopped: 0/3 stories merged" in done.stdout
    assert not called.exists()
    fleet = json.loads((folder / "fleet.json").read_text())
    assert (fleet["status"], fleet["exitReason"]) == ("halted", "usage_window")
    assert fleet["held"]["until"] == "2100-01-01T00:00:00Z" and "not the vendor's limit" in fleet["exitMessage"]
    assert {loop["state"] for loop in fleet["loops"]} <= {"waiting"}


def test_with_start_at_the_coordinator_waits_and_no_loop_starts_before_the_instant(
    project: Path, ralph_env: dict[str, str]
) -> None:
    """`--parallel --start-at HH:MM`: the coordinator waits (fleet.json `held` says until when), not each loop;
    Ctrl+C during the wait stops it with no loop started, and the instant is kept for the same flag again."""
    folder = parallel_feature(project, ralph_env, [_story(n) for n in (1, 2)])
    ahead = (datetime.now() + timedelta(hours=2)).strftime("%H:%M")
    running = start_parallel(project, ralph_env, "2", "--start-at", ahead, "--agent-cmd", agent_cmd("fleet_agent.py"))
    try:
        assert wait_until(lambda: "held" in _fleet(folder) and _fleet(folder)["held"] is not None, limit=30)
        held = _fleet(folder)["held"]
        assert held["message"].startswith(f"--start-at {ahead}: starting at ")
        running.send_signal(signal.SIGINT)
        out, _ = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 130, out
    assert f"--start-at {ahead}: starting at" in out and "started in slot" not in out
    assert json.loads((folder / ".start_at.json").read_text())["spec"] == ahead


def _fleet(folder: Path) -> dict[str, object]:
    try:
        body: dict[str, object] = json.loads((folder / "fleet.json").read_text())
    except (OSError, ValueError):
        return {}
    return body
