"""A parallel run paced against the user's caps on usage windows (issue 34), with real processes: the coordinator
reads the book of windows every loop of the user shares (here written as another loop on the account left it) and
starts no loop while the account is past a cap; with `--on-usage-limit exit` it stops, exit 2, reason usage_window."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RalphRunner
from tests.integration.helpers import parallel_feature


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
