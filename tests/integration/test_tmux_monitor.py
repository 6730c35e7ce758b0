"""`ralph run --monitor` in a real tmux: the loop and the monitor side by side on a wide window, stacked on a narrower
one, read with capture-pane.

Each test has its own tmux server (TMUX_TMPDIR) and a HOME whose .tmux.conf sets base-index and
pane-base-index to 1, as many users do: ralph addresses panes by id, so it must not matter.
"""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import termios
import threading
from pathlib import Path

import pytest

from tests.conftest import PYTHON, agent_cmd
from tests.integration.helpers import pid_alive, read_pid, wait_dead, wait_until

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (scripts/setup.sh installs it)"
)


def tmux(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["tmux", *args], env=env, capture_output=True, text=True, check=False)
    return done.stdout


def panes(env: dict[str, str]) -> list[dict[str, str]]:
    keys = ("id", "index", "title", "window", "dead")
    fmt = "\t".join(f"#{{{name}}}" for name in ("pane_id", "pane_index", "pane_title", "window_name", "pane_dead"))
    lines = tmux(env, "list-panes", "-s", "-t", "=ralph", "-F", fmt).splitlines()
    return [dict(zip(keys, line.split("\t"), strict=True)) for line in lines]


def layout(env: dict[str, str], window: str = "feat") -> str:
    """ "side by side" or "stacked": where the monitor's pane is beside the loop's."""
    fmt = "#{pane_left} #{pane_top}"
    loop, monitor = (
        line.split() for line in tmux(env, "list-panes", "-t", f"=ralph:={window}", "-F", fmt).split("\n")[:2]
    )
    return "side by side" if monitor[0] != loop[0] else "stacked" if monitor[1] != loop[1] else "?"


def pane_flags(env: dict[str, str], pane: str) -> dict[str, str]:
    """Whether the pane is on its alternate screen, and whether its cursor is shown."""
    found = tmux(env, "display-message", "-p", "-t", pane, "#{alternate_on} #{cursor_flag}").split()
    return dict(zip(("alternate_on", "cursor_flag"), found, strict=True))


def screen(env: dict[str, str], pane: str) -> str:
    return tmux(env, "capture-pane", "-p", "-J", "-t", pane)


def run_monitor(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", "run", *args, "--monitor"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_loop_and_monitor_side_by_side_until_complete(project, feature, tmux_env, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    done = run_monitor(project, tmux_env, "-n", "5", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    assert "tmux attach -t ralph" in done.stdout

    found = panes(tmux_env)
    assert [(pane["index"], pane["title"]) for pane in found] == [("1", "RALPH LOOP"), ("2", "MONITOR")]
    assert found[0]["window"] == "feat"
    loop, monitor = found[0]["id"], found[1]["id"]
    assert layout(tmux_env) == "side by side"  # nobody attached: a 200-column window

    assert wait_until(lambda: "Iteration  1 / 5" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    assert wait_until(lambda: "screen-cleared-attempt" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    shown = screen(tmux_env, monitor)
    assert "Status     running" in shown
    assert "S-1 - Story 1" in shown and "0/3 stories pass" in shown
    assert "Calls      1/100 this hour" in shown
    assert "Circuit    CLOSED" in shown
    assert "⚙ Bash: pytest -k S-1" in shown  # the log's stream-json line, read as a tool use
    assert "run started: command, up to 5 iterations, 0/3 done" in shown
    assert wait_until(lambda: "Iteration 1 / 5" in screen(tmux_env, loop)), screen(tmux_env, loop)
    # the agent's title sequence and screen clear were not passed through
    assert [pane["title"] for pane in panes(tmux_env)] == ["RALPH LOOP", "MONITOR"]

    # a window made narrower (a smaller client attached, a terminal resized) stacks them: loop above, monitor below
    tmux(tmux_env, "resize-window", "-t", "=ralph:=feat", "-x", "100", "-y", "40")
    assert wait_until(lambda: layout(tmux_env) == "stacked"), tmux(tmux_env, "list-panes", "-t", "=ralph:=feat")
    assert wait_until(lambda: "Iteration  1 / 5" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    tmux(tmux_env, "resize-window", "-t", "=ralph:=feat", "-x", "160", "-y", "40")
    assert wait_until(lambda: layout(tmux_env) == "side by side")

    for number in (1, 2, 3):
        (gates / f"go-{number}").touch()
    assert wait_until(lambda: "Ralph has exited: complete" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    final = screen(tmux_env, monitor)
    assert "Iteration:  3 / " in final and "Exit:       complete - every task is done" in final
    assert wait_until(lambda: "press Enter to close this pane" in screen(tmux_env, loop)), screen(tmux_env, loop)
    assert "ALL COMPLETE! 3/3 stories pass" in screen(tmux_env, loop)
    # both panes hold their last screen until Enter; then they close, and with them the session
    for pane in (loop, monitor):
        tmux(tmux_env, "send-keys", "-t", pane, "Enter")
    assert wait_until(lambda: not panes(tmux_env))


def test_ctrl_c_in_the_loop_pane_stops_the_agent_and_the_monitor_sees_it(project, feature, tmux_env, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    done = run_monitor(project, tmux_env, "-n", "5", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    loop, monitor = (pane["id"] for pane in panes(tmux_env))
    assert wait_until(lambda: read_pid(gates / "pid-1") is not None)
    agent = read_pid(gates / "pid-1")
    assert agent is not None and pid_alive(agent)
    assert wait_until(lambda: "Running…" in screen(tmux_env, loop)), screen(tmux_env, loop)

    tmux(tmux_env, "send-keys", "-t", loop, "C-c")
    assert wait_until(lambda: "ended with exit code 130" in screen(tmux_env, loop)), screen(tmux_env, loop)
    stopped = screen(tmux_env, loop)
    assert "FINAL SUMMARY" in stopped and "To continue, run: ralph run -n 5 --agent-cmd" in stopped
    assert wait_dead(agent)
    assert pane_flags(tmux_env, loop) == {"alternate_on": "0", "cursor_flag": "1"}  # the terminal as it was
    assert wait_until(lambda: "Ralph has exited: interrupted" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    # the monitor has left its alternate screen for the summary, cursor shown
    assert pane_flags(tmux_env, monitor) == {"alternate_on": "0", "cursor_flag": "1"}


def test_ctrl_c_in_the_monitor_pane_leaves_the_loop_running(project, feature, tmux_env, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    done = run_monitor(project, tmux_env, "-n", "1", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    loop, monitor = (pane["id"] for pane in panes(tmux_env))
    assert wait_until(lambda: "Iteration  1 / 1" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    assert pane_flags(tmux_env, monitor) == {"alternate_on": "1", "cursor_flag": "0"}  # the live dashboard

    tmux(tmux_env, "send-keys", "-t", monitor, "C-c")
    assert wait_until(lambda: "ended with exit code 130" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    assert "ralph monitor: stopped (the loop, if running, goes on)" in screen(tmux_env, monitor)
    assert pane_flags(tmux_env, monitor) == {"alternate_on": "0", "cursor_flag": "1"}
    assert "Running…" in screen(tmux_env, loop)  # the loop did not notice
    (gates / "go-1").touch()
    assert wait_until(lambda: "ALL COMPLETE" in screen(tmux_env, loop) or "Stopped" in screen(tmux_env, loop))


def test_a_second_loop_gets_a_window_of_its_own(project, feature, tmux_env, tmp_path):
    tmux(tmux_env, "new-session", "-d", "-s", "ralph", "-n", "mine")
    gates = tmp_path / "gates"
    gates.mkdir()
    done = run_monitor(project, tmux_env, "-n", "1", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    windows = tmux(tmux_env, "list-windows", "-t", "=ralph", "-F", "#{window_name} #{window_panes}").split()
    assert windows == ["mine", "1", "feat", "2"]
    (gates / "go-1").touch()


def test_the_monitor_of_a_relaunched_run_skips_the_last_runs_end(project, feature, ralph, tmux_env, tmp_path):
    first = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("story_agent.py"), env=tmux_env)
    assert first.returncode == 1
    gates = tmp_path / "gates"
    gates.mkdir()
    done = run_monitor(project, tmux_env, "-n", "1", "--agent-cmd", agent_cmd("gate_agent.py", str(gates)))
    assert done.returncode == 0, done.stderr
    monitor = panes(tmux_env)[1]["id"]
    assert wait_until(lambda: "S-2 - Story 2" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
    assert "Ralph has exited" not in screen(tmux_env, monitor)
    (gates / "go-2").touch()
    assert wait_until(lambda: "Ralph has exited: halted" in screen(tmux_env, monitor)), screen(tmux_env, monitor)


def test_without_tmux_the_loop_runs_here_with_a_warning(project, feature, ralph_env, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    env = {**ralph_env, "PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(PYTHON)}"}
    done = run_monitor(project, env, "-n", "5", "--agent-cmd", agent_cmd("story_agent.py", "--promise"))
    assert done.returncode == 0, done.stderr
    assert "ralph: warning: tmux not found: --monitor ignored, the loop runs here" in done.stderr
    assert "ALL COMPLETE! 3/3 stories pass" in done.stdout


def test_started_from_a_terminal_it_attaches(project, feature, tmux_env, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # a 100×30 terminal
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "ralphloop",
            "run",
            "-n",
            "1",
            "--monitor",
            "--agent-cmd",
            agent_cmd("gate_agent.py", str(gates)),
        ],
        cwd=project,
        env=tmux_env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            seen.extend(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: tmux(tmux_env, "list-clients", "-t", "=ralph").strip() != ""), bytes(seen)
        assert wait_until(lambda: b"RALPH LOOP" in seen or b"Iteration 1 / 1" in seen), bytes(seen)
        assert layout(tmux_env) == "stacked"  # made at the size of the terminal it is shown in: too narrow for two
        tmux(tmux_env, "detach-client", "-s", "=ralph")
        assert proc.wait(timeout=30) == 0
        reader.join(timeout=5)
        assert b"detached; the loop goes on in tmux session ralph (back with: tmux attach -t ralph)" in bytes(seen)
        assert panes(tmux_env)  # the loop goes on without the client
    finally:
        (gates / "go-1").touch()
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_a_parallel_run_with_monitor_runs_its_coordinator_beside_the_fleets_monitor(
    project, ralph, ralph_env, tmux_env, tmp_path
):
    """`ralph run --parallel 2 --monitor`: the coordinator in the loop's pane, the monitor following its fleet."""
    from tests.integration.helpers import parallel_feature

    parallel_feature(project, ralph_env, 3)

    done = run_monitor(project, tmux_env, "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stderr
    loop, monitor = (pane["id"] for pane in panes(tmux_env))
    assert wait_until(lambda: "All 3 stories merged into ralph/feat." in screen(tmux_env, loop)), screen(tmux_env, loop)
    assert wait_until(lambda: "3 / 3 stories merged" in screen(tmux_env, monitor)), screen(tmux_env, monitor)
