"""Hostile input to `ralph monitor`, `ralph run --monitor` and the notifications (found in review), with real
processes: a real `ralph run`, a real `ralph monitor`, a private tmux server."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PYTHON, agent_cmd
from tests.integration.helpers import wait_until
from tests.integration.test_tmux_monitor import panes, run_monitor, screen, tmux

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def ralph(project: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def edit_status(feature: Path, **changes: object) -> None:
    path = feature / "status.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_monitor_survives_deeply_nested_json_printed_by_the_agent(project, feature, ralph_env):
    deep = '{"type": "assistant", "x": ' + "[" * 1500 + "]" * 1500 + "}"
    run = ralph(project, ralph_env, "run", "-n", "1", "--agent-cmd", agent_cmd("say.py", deep))
    assert run.returncode == 1, run.stderr  # max_iterations: the run itself is fine
    watched = ralph(project, ralph_env, "monitor", "-f", "feat")
    assert "internal error" not in watched.stderr, watched.stderr
    assert watched.returncode == 0
    assert "Ralph has exited: halted" in watched.stdout


def test_monitor_does_not_hang_on_a_log_file_that_is_not_a_file(project, feature, ralph_env, tmp_path):
    run = ralph(project, ralph_env, "run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hello"))
    assert run.returncode == 1, run.stderr
    fifo = tmp_path / "not-a-log"
    os.mkfifo(fifo)
    edit_status(feature, logFile=str(fifo))  # status.json sits in the folder the agent works in
    watched = ralph(project, ralph_env, "monitor", "-f", "feat", timeout=30)
    assert watched.returncode == 0
    assert "Ralph has exited: halted" in watched.stdout


def test_monitor_summary_survives_a_cost_that_is_not_a_number(project, feature, ralph_env):
    run = ralph(project, ralph_env, "run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hello"))
    assert run.returncode == 1, run.stderr
    edit_status(feature, costUsd="0.50")
    watched = ralph(project, ralph_env, "monitor", "-f", "feat")
    assert "internal error" not in watched.stderr, watched.stderr
    assert watched.returncode == 0


def test_the_webhook_url_never_reaches_the_logs(project, feature, ralph_env):
    token = "SuperSecretWebhookPathToken42"
    env = {**ralph_env, "RALPH_NOTIFY_WEBHOOK": f"http://bot:hunter2pass99@127.0.0.1:9/hooks/T000/{token}"}
    show_env = shlex.join([PYTHON, "-c", "import os; print('env:', os.environ.get('RALPH_NOTIFY_WEBHOOK'))"])
    run = ralph(project, env, "run", "-n", "1", "--agent-cmd", show_env)
    assert run.returncode == 1, run.stderr
    assert "webhook http://127.0.0.1:9 failed" in run.stderr  # the notification itself is tried
    leaked = [
        str(path.relative_to(project))
        for path in (project / ".ralph").rglob("*")
        if path.is_file() and (token in path.read_text(errors="replace") or "hunter2pass99" in path.read_text())
    ]
    assert leaked == []


@needs_tmux
@pytest.mark.slow
def test_a_folder_name_is_not_run_as_a_tmux_format_command(project, feature, tmux_env, tmp_path):
    home = Path(tmux_env["HOME"])
    marker = home / "pwned-by-tmux"
    odd = project / "sub#(cd;touch pwned-by-tmux)"
    odd.mkdir()
    done = run_monitor(odd, tmux_env, "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert done.returncode == 0, done.stderr
    loop = panes(tmux_env)[0]["id"]
    assert wait_until(lambda: "press Enter to close this pane" in screen(tmux_env, loop)), screen(tmux_env, loop)
    # tmux runs #() jobs in the background: give one time to show itself before saying none ran
    assert not wait_until(marker.exists, limit=5), "tmux ran the command in the folder's name"


@needs_tmux
def test_the_monitor_fits_its_pane_whatever_columns_the_launching_shell_exported(project, feature, tmux_env, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    for number in (1, 2, 3):
        (gates / f"go-{number}").touch()
    env = {**tmux_env, "COLUMNS": "250", "LINES": "90"}
    done = run_monitor(project, env, "-n", "3", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    monitor = panes(tmux_env)[1]["id"]
    assert wait_until(lambda: "Ralph has exited: complete" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    rows = tmux(tmux_env, "capture-pane", "-p", "-t", monitor).splitlines()  # not joined: as the pane shows it
    top = next(row for row in rows if "╭" in row)
    assert "Ralph has exited" in top and top.rstrip().endswith("╮"), "\n".join(rows)
