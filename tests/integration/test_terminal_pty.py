"""The real `ralph run` on a pseudo-terminal that is its controlling terminal: the spinner, colour and
NO_COLOR, and a real Ctrl+C typed into the terminal (the line discipline sends SIGINT), once or twice.

Whatever ralph does, the terminal comes back as it was: the cursor shown and the modes ralph found
(the test plays a grandchild that turned echo and line editing off and died without restoring them).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.conftest import PYTHON, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import read_pid, wait_dead, wait_until
from tests.integration.on_terminal import COLUMNS, OnTerminal, terminal_env

HIDE, SHOW = "\x1b[?25l", "\x1b[?25h"
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _agent_tree(pid: int) -> list[int]:
    return [child.pid for child in psutil.Process(pid).children(recursive=True)]


def _cursor_shown_at_the_end(output: str) -> None:
    assert HIDE in output, "the spinner never hid the cursor"
    assert output.rfind(SHOW) > output.rfind(HIDE), "the cursor was left hidden"


def _spinner_lines(output: str) -> list[str]:
    """Every spinner or countdown frame drawn, without colour codes."""
    plain = re.sub(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]", "", output)
    return [part for part in re.split(r"\r\x1b\[2K|\r?\n", plain) if part[:1] in FRAMES and part]


def _start_hanging(project: Path, ralph_env: dict[str, str], background: Background, agent: str) -> OnTerminal:
    run = OnTerminal(["run", "-n", "3", "--agent-cmd", agent], project, terminal_env(ralph_env), background)
    return run


def test_ctrl_c_on_a_terminal_stops_the_agent_and_gives_the_terminal_back(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    run = _start_hanging(project, ralph_env, background, agent_cmd("hang_with_grandchild.py", str(pidfile)))
    try:
        working = wait_until(lambda: "Running…" in run.text and read_pid(pidfile) is not None)
        assert working and run.proc.poll() is None, run.text
        tree = _agent_tree(run.proc.pid)
        background.adopt_tree(run.proc.pid)
        assert read_pid(pidfile) in tree
        run.mess_up_modes()

        run.type(b"\x03")  # Ctrl+C, through the terminal's line discipline
        code, output = run.finish()
    finally:
        run.close()

    assert code == 130, output
    assert "FINAL SUMMARY" in output and "To continue, run: ralph run" in output, output
    assert output.index("FINAL SUMMARY") < output.index("To continue, run:")
    _cursor_shown_at_the_end(output)
    assert "\x1b[?1049h" not in output and "\x1b[?1049l" not in output  # ralph never used the alternate screen
    assert run.final_modes == run.modes, "the terminal's modes were not restored"
    for pid in tree:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived the Ctrl+C"
    assert read_json(feature / "status.json")["exitReason"] == "interrupted"
    # The spinner's line never wraps on this 60-column terminal.
    frames = _spinner_lines(output)
    assert any(frame.startswith("⠋ Running… 00:00") for frame in frames), frames
    assert all(len(frame) < COLUMNS for frame in frames), frames
    assert "\x1b[3" not in output  # NO_COLOR (ralph_env sets it): no colour, the spinner still turns


def test_a_second_ctrl_c_quits_at_once_and_still_gives_the_terminal_back(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    # An agent that ignores SIGTERM, and a grace period far longer than the test: only the second
    # Ctrl+C can end this run soon.
    home = Path(ralph_env["RALPH_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("process:\n  kill_grace_seconds: 3600\n")
    pidfile = tmp_path / "grandchild.pid"
    stubborn = shlex.join(["sh", "-c", "trap '' TERM; exec " + agent_cmd("hang_with_grandchild.py", str(pidfile))])
    run = _start_hanging(project, ralph_env, background, stubborn)
    try:
        working = wait_until(lambda: "Running…" in run.text and read_pid(pidfile) is not None)
        assert working and run.proc.poll() is None, run.text
        tree = _agent_tree(run.proc.pid)
        background.adopt_tree(run.proc.pid)
        run.mess_up_modes()

        run.type(b"\x03")
        assert wait_until(lambda: "Ctrl+C again to quit at once" in run.text), run.text
        assert run.proc.poll() is None  # still waiting for the agent that ignores SIGTERM
        run.type(b"\x03")
        code, output = run.finish()
    finally:
        run.close()

    assert code == 130, output
    assert "ralph: stopped at once" in output
    _cursor_shown_at_the_end(output)
    assert run.final_modes == run.modes, "the terminal's modes were not restored"
    for pid in tree:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived the second Ctrl+C"


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])
def test_a_run_on_a_terminal_shows_the_spinner(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, colour: bool
) -> None:
    run = OnTerminal(
        ["run", "--agent-cmd", agent_cmd("story_agent.py")], project, terminal_env(ralph_env, colour=colour), background
    )
    try:
        code, output = run.finish()
    finally:
        run.close()

    assert code == 0, output
    assert "ALL COMPLETE" in output
    frames = _spinner_lines(output)
    assert sum(frame.startswith("⠋ Running… 00:00") for frame in frames) >= 3, frames  # one per iteration
    _cursor_shown_at_the_end(output)
    assert output.count(HIDE) == output.count(SHOW) - 1  # one hide per iteration; one more show on exit
    if colour:
        assert "\x1b[36m⠋\x1b[0m Running… 00:00" in output
        assert "\x1b[32m" in output  # ✓ in green
    else:
        assert "\x1b[3" not in output and "\x1b[0m" not in output
    assert run.final_modes == run.modes


def test_the_same_run_on_a_pipe_has_no_spinner_and_no_escape_sequences(
    project: Path, feature: Path, ralph_env: dict[str, str]
) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "ralphloop", "run", "--agent-cmd", agent_cmd("story_agent.py")],
        cwd=project,
        env=terminal_env(ralph_env, colour=True),  # no NO_COLOR: a pipe alone turns colour off
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALL COMPLETE" in done.stdout
    output = done.stdout + done.stderr
    assert "\x1b" not in output and "\r" not in output
    assert not any(char in output for char in FRAMES)
    assert "Running…" not in output
