"""Under `ralph run --monitor` the loop runs in a tmux pane: a terminal, but one nobody may be watching. At a
usage limit it waits for the reset (and notifies) instead of asking a question nobody answers; the question
is asked there only when `--on-usage-limit ask` says so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import wait_until
from tests.integration.test_tmux_monitor import panes, run_monitor, screen

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (scripts/setup.sh installs it)"
)

LIMIT = "Claude AI usage limit reached|1893456000"  # 2030-01-01T00:00:00Z


def waiting_kind(feature: Path) -> str | None:
    try:
        return (read_json(feature / "status.json").get("waiting") or {}).get("kind")
    except (OSError, ValueError):
        return None


def test_the_loop_pane_waits_at_a_usage_limit_instead_of_asking(project, feature, tmux_env, tmp_path):
    agent = agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT)
    done = run_monitor(project, tmux_env, "-n", "3", "--agent-cmd", agent)
    assert done.returncode == 0, done.stderr
    loop = panes(tmux_env)[0]["id"]
    assert wait_until(lambda: waiting_kind(feature) == "usage limit"), screen(tmux_env, loop)
    assert "[w]ait/[e]xit" not in screen(tmux_env, loop)
    # the loop's pane alone: tmux's server keeps no such variable for the panes the user opens later
    global_env = ["tmux", "show-environment", "-g"]
    shown = subprocess.run(global_env, env=tmux_env, capture_output=True, text=True, check=True).stdout
    assert "RALPH_UNATTENDED" not in shown, shown


def test_the_question_is_asked_there_when_the_flag_asks_for_it(project, feature, tmux_env, tmp_path):
    agent = agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT)
    done = run_monitor(project, tmux_env, "-n", "3", "--on-usage-limit", "ask", "--agent-cmd", agent)
    assert done.returncode == 0, done.stderr
    loop = panes(tmux_env)[0]["id"]
    assert wait_until(lambda: "[w]ait/[e]xit" in screen(tmux_env, loop)), screen(tmux_env, loop)
    assert waiting_kind(feature) == "answer"  # the monitor beside it says so
