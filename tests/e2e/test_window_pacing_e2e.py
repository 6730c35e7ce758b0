"""Pacing against the user's caps on usage windows (issue 34), end to end with the real Claude Code CLI against the
loopback fake of the Anthropic API, logged in with a fake subscription token: the fake sends the
`anthropic-ratelimit-unified-*` headers of a rising 5-hour window, the real CLI reports them in its `rate_limit_event`,
and ralph stops, waits, or holds a second loop, at the user's cap. No paid call is made to learn a share: each one
comes with a call the loop made anyway.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json, write_prd
from tests.e2e.fake_anthropic import FakeAnthropic, Reply, Request, Text, bash
from tests.e2e.test_ralph_claude import both_envs, finish_story, run, use_claude
from tests.integration.helpers import wait_until


def unified(share: float, reset: int, weekly: float = 0.1) -> dict[str, str]:
    """The headers of a subscription session whose 5-hour window is `share` used and resets at `reset`."""
    week = reset + 6 * 86400
    return {
        "anthropic-ratelimit-unified-status": "allowed",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": "allowed",
        "anthropic-ratelimit-unified-5h-reset": str(reset),
        "anthropic-ratelimit-unified-5h-utilization": f"{share:g}",
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-reset": str(week),
        "anthropic-ratelimit-unified-7d-utilization": f"{weekly:g}",
    }


def story_turns(fake: FakeAnthropic, story: str, share: float, reset: int) -> None:
    """One iteration's two answers (the tool use that does `story`, then the reply), the window at `share` from
    the first of them on."""

    def first(request: Request) -> Reply:
        fake.headers.clear()
        fake.headers.update(unified(share, reset))
        return bash(finish_story(story))

    fake.add_turns(first, Text(f"{story} is done."))


def waiting_for_window(feature: Path) -> Callable[[], bool]:
    def waiting() -> bool:
        status = feature / "status.json"
        return status.exists() and (read_json(status).get("waiting") or {}).get("kind") == "usage window"

    return waiting


@pytest.fixture
def env(
    project: Path, tmp_path: Path, fake_api: FakeAnthropic, ralph_env: dict[str, str], claude_bin: str
) -> dict[str, str]:
    """The installed Claude Code in the project's config, logged in with a fake subscription token (the CLI then
    honours the unified rate-limit headers)."""
    use_claude(project, claude_bin)
    return both_envs(tmp_path, fake_api, ralph_env, oauth=True)


def book(env: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((Path(env["RALPH_HOME"]) / "agent-limits.json").read_text())
    return body


def test_a_cap_stops_the_loop_after_the_call_that_reached_it(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    env: dict[str, str],
    fake_api: FakeAnthropic,
    tmp_path: Path,
    ralph_env: dict[str, str],
    claude_bin: str,
) -> None:
    reset = int(time.time()) + 4 * 3600
    story_turns(fake_api, "S-1", 0.3, reset)
    story_turns(fake_api, "S-2", 0.55, reset)
    story_turns(fake_api, "S-3", 0.6, reset)  # never asked for: the cap holds the loop before this call

    done = run(ralph, env, "--max-window", "five_hour=50%", "--on-usage-limit", "exit")

    assert done.returncode == 2, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_window")
    assert "5-hour window is 55% used, at or past your cap of 50%" in status["exitMessage"]
    assert "not the vendor's limit" in status["exitMessage"]
    assert (project / "S-1.txt").exists() and (project / "S-2.txt").exists() and not (project / "S-3.txt").exists()
    [windows] = book(env)["windows"].values()
    resets = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert (windows["five_hour"]["utilization"], windows["five_hour"]["resetsAt"]) == (0.55, resets)
    assert windows["seven_day"]["utilization"] == 0.1
    assert "--max-window" in done.stdout  # what to do: wait for the reset, or raise the cap

    # a second loop on the same account (another project, the same login) is held before any call
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=other, env=ralph_env, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "initial"], cwd=other, env=ralph_env, check=True)
    assert ralph("init", "feat", cwd=other, env=env).returncode == 0
    write_prd(other / ".ralph" / "feat", 2)
    use_claude(other, claude_bin)
    asked = len(fake_api.main_requests)
    second = ralph(
        "run", "-f", "feat", "--agent", "claude", "--max-window", "five_hour=50%", "--on-usage-limit", "exit",
        cwd=other, env=env, timeout=120,
    )  # fmt: skip
    assert second.returncode == 2, second.stdout + second.stderr
    assert len(fake_api.main_requests) == asked  # no call: the first loop's reading holds the account
    assert read_json(other / ".ralph" / "feat" / "status.json")["exitReason"] == "usage_window"
    shown = json.loads(ralph("status", "--json", cwd=other, env=env).stdout)["windows"]
    assert [(w["window"], w["utilization"], w["cap"]) for w in shown] == [
        ("five_hour", 0.55, 0.5),
        ("seven_day", 0.1, None),
    ]


def test_with_wait_the_loop_waits_for_the_windows_reset_and_goes_on(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic
) -> None:
    reset = int(time.time()) + 6  # the fake's window resets in a few seconds
    story_turns(fake_api, "S-1", 0.7, reset)
    for story in ("S-2", "S-3"):
        story_turns(fake_api, story, 0.05, reset + 5 * 3600)  # the next window, hardly used

    started = time.monotonic()
    done = run(ralph, env, "--max-window", "five_hour=50%", "--on-usage-limit", "wait")

    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started >= 4  # it waited for the reset
    events = [json.loads(line) for line in (feature / "events.jsonl").read_text().splitlines()]
    waits = [event for event in events if "usage window" in json.dumps(event)]
    assert waits, events
    assert all((project / f"S-{n}.txt").exists() for n in (1, 2, 3))


def test_a_ralph_killed_during_a_window_wait_waits_for_the_same_instant_when_started_again(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic
) -> None:
    reset = int(time.time()) + 12
    story_turns(fake_api, "S-1", 0.9, reset)
    for story in ("S-2", "S-3"):
        story_turns(fake_api, story, 0.05, reset + 5 * 3600)
    argv = [sys.executable, "-m", "ralphloop", "run", "-f", "feat", "--no-archive", "--agent", "claude"]
    argv += ["--max-window", "five_hour=50%", "--on-usage-limit", "wait"]
    first = subprocess.Popen(
        argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert wait_until(waiting_for_window(feature), limit=60)
        until = read_json(feature / "status.json")["waiting"]["until"]
        os.killpg(first.pid, signal.SIGKILL)  # no chance to write anything more
    finally:
        first.wait(10)
    asked = len(fake_api.main_requests)

    again = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert wait_until(waiting_for_window(feature), limit=60)
    assert read_json(feature / "status.json")["waiting"]["until"] == until  # the same instant, from the book
    assert len(fake_api.main_requests) == asked  # held without a call
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 0, out
    assert all((project / f"S-{n}.txt").exists() for n in (1, 2, 3))
