"""Pacing against the user's caps on usage windows (issue 34) with the real Codex CLI against the loopback fake of the
Responses API: the fake sends the ChatGPT plan's `x-codex-primary-*` / `x-codex-secondary-*` headers, the real CLI
writes them into its session file's `rate_limits` (primary: the 5-hour window, secondary: the weekly one), and ralph
reads `used_percent` there and stops at the user's cap."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.conftest import codex_env
from tests.e2e.fake_anthropic import FakeAnthropic, Text, bash
from tests.e2e.fake_openai import FakeOpenAI, Message, Reply, Request
from tests.e2e.test_ralph_claude import both_envs, finish_story, use_claude
from tests.e2e.test_ralph_codex import MODEL, run, use_codex
from tests.e2e.test_window_pacing_e2e import unified

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install


def plan_headers(primary: float, reset: int) -> dict[str, str]:
    """A ChatGPT plan's windows as Codex's backend sends them: the 5-hour one `primary` percent used."""
    return {
        "x-codex-primary-used-percent": f"{primary:g}",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": str(reset),
        "x-codex-primary-reset-after-seconds": str(max(0, reset - int(time.time()))),
        "x-codex-secondary-used-percent": "12",
        "x-codex-secondary-window-minutes": "10080",
        "x-codex-secondary-reset-at": str(reset + 6 * 86400),
        "x-codex-secondary-reset-after-seconds": str(max(0, reset + 6 * 86400 - int(time.time()))),
    }


def test_codex_stops_at_the_cap_after_the_call_whose_session_file_reached_it(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], codex_bin: str
) -> None:
    use_codex(project, codex_bin)
    reset = int(time.time()) + 4 * 3600
    with FakeOpenAI() as fake:
        env = codex_env(tmp_path / "codex-home", fake, ralph_env, MODEL)

        def answer(share: float) -> object:
            def reply(request: Request) -> Reply:
                fake.headers.clear()
                fake.headers.update(plan_headers(share, reset))
                return Message("Working on it.")

            return reply

        fake.add_turns(answer(30), answer(55), answer(60))
        done = run(ralph, env, "--max-window", "five_hour=50%", "--on-usage-limit", "exit")

        assert done.returncode == 2, done.stdout + done.stderr
        assert len(fake.main_requests) == 2  # the third call was held by the cap
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "usage_window"
    assert "codex's 5-hour window is 55% used, at or past your cap of 50%" in status["exitMessage"]
    book = json.loads((Path(ralph_env["RALPH_HOME"]) / "agent-limits.json").read_text())
    [windows] = book["windows"].values()
    resets = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert (windows["five_hour"]["utilization"], windows["five_hour"]["resetsAt"]) == (0.55, resets)
    assert windows["seven_day"]["utilization"] == 0.12


def test_failover_moves_to_the_agent_with_headroom_before_any_refusal(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    tmp_path: Path,
    ralph_env: dict[str, str],
    codex_bin: str,
    claude_bin: str,
    fake_api: FakeAnthropic,
) -> None:
    """The real Claude Code CLI reports its 5-hour window at 55% (the cap is 50%): the next iteration runs on the real
    Codex CLI, whose account has headroom; nobody was refused."""
    use_codex(project, codex_bin)
    use_claude(project, claude_bin)
    reset = int(time.time()) + 4 * 3600
    fake_api.headers.update(unified(0.55, reset))
    fake_api.add_turns(bash(finish_story("S-1")), Text("S-1 is done."))
    with FakeOpenAI() as openai:
        openai.headers.update(plan_headers(10, reset))
        openai.add_turns(Message("Looking at S-2."))
        env = {
            **codex_env(tmp_path / "codex-home", openai, ralph_env, MODEL),
            **{k: v for k, v in both_envs(tmp_path, fake_api, ralph_env, oauth=True).items() if k != "HOME"},
        }
        done = ralph(
            "run", "-f", "feat", "--no-archive", "--agent", "claude,codex", "--max-window", "five_hour=50%", "-n", "2",
            env=env, timeout=300,
        )  # fmt: skip
        assert len(openai.main_requests) == 1
    assert done.returncode == 1, done.stdout + done.stderr  # -n 2 reached
    lines = [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert [line["agent"] for line in lines] == ["claude", "codex"]
    assert "claude's 5-hour window is 55% used" in done.stdout and "runs on codex" in done.stdout
    assert (project / "S-1.txt").exists()


def test_codex_with_wait_waits_for_the_windows_reset_then_goes_on(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], codex_bin: str
) -> None:
    use_codex(project, codex_bin)
    reset = int(time.time()) + 5  # the fake plan's 5-hour window resets in a few seconds
    with FakeOpenAI() as fake:
        env = codex_env(tmp_path / "codex-home", fake, ralph_env, MODEL)

        def answer(share: float, resets: int) -> object:
            def reply(request: Request) -> Reply:
                fake.headers.clear()
                fake.headers.update(plan_headers(share, resets))
                return Message("Working on it.")

            return reply

        fake.add_turns(answer(80, reset), answer(5, reset + 5 * 3600))
        started = time.monotonic()
        done = run(ralph, env, "--max-window", "five_hour=50%", "--on-usage-limit", "wait", "-n", "2")
        assert len(fake.main_requests) == 2
    assert done.returncode == 1, done.stdout + done.stderr  # -n 2: both calls made, the second after the reset
    assert time.monotonic() - started >= 3
    events = (feature / "events.jsonl").read_text()
    assert "usage window" in events and "80% used" in events
