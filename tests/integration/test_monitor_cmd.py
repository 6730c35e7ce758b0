"""`ralph monitor` on a pipe: one line per change of a real run, the summary when it ends, then exit."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

from tests.conftest import PYTHON, agent_cmd, write_prd
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, wait_until


class Lines:
    """A process's stdout, collected line by line in a thread (the pipe never fills)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def saw(self, needle: str) -> bool:
        return any(needle in line for line in self.lines)

    def text(self) -> str:
        return "\n".join(self.lines)


def monitor(background: Background, *args: str) -> Lines:
    proc = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "monitor", *args],
        cwd=background.project,
        env=background.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    background.started.append(proc)
    return Lines(proc)


def gate(tmp_path: Path) -> tuple[Path, str]:
    gates = tmp_path / "gates"
    gates.mkdir()
    return gates, agent_cmd("gate_agent.py", str(gates))


def test_monitor_waits_for_ralph_then_follows_the_run_to_its_end(feature, background, tmp_path):
    gates, agent = gate(tmp_path)
    watcher = monitor(background, "-f", "feat")
    assert wait_until(lambda: watcher.saw("Waiting for Ralph to start...")), watcher.text()

    loop = background.ralph("run", "-n", "5", "--agent-cmd", agent)
    assert wait_until(lambda: watcher.saw("iteration 1 / 5 · running · S-1 - Story 1 · 0/3 done")), watcher.text()
    (gates / "go-1").touch()
    assert wait_until(lambda: watcher.saw("iteration 2 / 5 · running · S-2 - Story 2 · 1/3 done")), watcher.text()
    (gates / "go-2").touch()
    (gates / "go-3").touch()

    assert watcher.proc.wait(timeout=60) == 0, watcher.text()
    assert loop.wait(timeout=60) == 0
    watcher.thread.join(timeout=10)
    assert not feature.exists()  # the completed feature moved to .ralph/archive/ (seed 003): its end read there
    lines = watcher.lines
    assert "Ralph has exited: complete" in lines
    assert "Iteration:  3 / 5" in lines
    assert "Exit:       complete - every task is done" in lines
    assert "Progress:   3/3 stories pass" in lines
    assert any(line.startswith("Duration:   ") for line in lines)
    # one line per change, never a redraw; the agent's escape sequences never reach the output
    assert "\x1b" not in watcher.text() and "\r" not in watcher.text()
    state_lines = [line for line in lines if " · circuit " in line]
    assert len(state_lines) == len(set(state_lines))


def test_monitor_of_a_finished_run_shows_the_summary_and_exits(ralph, feature):
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("story_agent.py"))
    assert done.returncode == 1, done.stdout + done.stderr  # one story of three: max iterations
    shown = ralph("monitor")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].endswith("iteration 1 / 1 · halted (max_iterations) · S-1 - Story 1 · 1/3 done · "
                             "calls 1/100 this hour · circuit CLOSED") or "halted" in lines[0], lines  # fmt: skip
    assert "Ralph has exited: halted" in lines
    assert any(line.startswith("Exit:       max_iterations") for line in lines), lines
    # the run's own wall time, as its summary line said it (not its two stamps' difference, to the second)
    wall = re.search(r"· ([0-9hms.]+) wall ·", done.stdout)
    assert wall is not None, done.stdout
    assert f"Duration:   {wall.group(1)}" in lines, (wall.group(1), lines)


def test_monitor_wait_skips_the_last_run_and_follows_the_next(ralph, feature, background, tmp_path):
    first = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("story_agent.py"))
    assert first.returncode == 1
    gates, agent = gate(tmp_path)
    watcher = monitor(background, "--wait")
    assert wait_until(lambda: watcher.saw("Waiting for Ralph to start...")), watcher.text()
    assert not watcher.saw("Ralph has exited")

    loop = background.ralph("run", "-n", "1", "--agent-cmd", agent)
    assert wait_until(lambda: watcher.saw("iteration 2 · this run: 0/1 counted so far · running · S-2 - Story 2")), (
        watcher.text()
    )
    (gates / "go-2").touch()  # RALPH_ITERATION counts every run of the feature
    assert watcher.proc.wait(timeout=60) == 0, watcher.text()
    assert loop.wait(timeout=60) == 1
    watcher.thread.join(timeout=10)
    assert "Ralph has exited: halted" in watcher.lines
    assert "Progress:   2/3 stories pass" in watcher.lines


def test_monitor_of_an_unknown_feature_is_a_one_line_error(ralph, feature):
    done = ralph("monitor", "-f", "nope")
    assert_one_line_error(done, "-f nope")


def test_monitor_shows_a_killed_run_as_stopped(ralph, project):
    folder = project / ".ralph" / "feat"
    write_prd(folder, 2)
    (folder / "status.json").write_text('{"status": "running", "iteration": 2, "startedAt": "2026-11-21T02:00:00Z"}')
    shown = ralph("monitor", "-f", "feat")
    assert shown.returncode == 0
    assert "Ralph has exited: stopped" in shown.stdout
