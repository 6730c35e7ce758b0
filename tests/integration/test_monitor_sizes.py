"""The real `ralph monitor` in real tmux sessions of 80×24, 120×40 and 200×50, over the files a real `ralph run` is
writing (a stand-in `claude` that reports cost and holds its second story at a gate): what must be visible at each
size, read with capture-pane. Captures land in the test's output on failure."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENTS, PYTHON
from tests.integration.conftest import Background
from tests.integration.helpers import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SIZES = ((80, 24), (120, 40), (200, 50))
SIZES_BY_WIDTH = dict(SIZES)


def tmux(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["tmux", *args], env=env, capture_output=True, text=True, check=False).stdout


def status(feature: Path) -> dict[str, object]:
    try:
        found: dict[str, object] = json.loads((feature / "status.json").read_text())
    except (OSError, ValueError):
        return {}
    return found


@pytest.fixture
def held_run(feature: Path, background: Background, tmux_env: dict[str, str], tmp_path: Path) -> Path:
    """A real run with a budget: its first story done, its second held by the agent at `Bash: pytest -q`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    claude = folder / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "claude_gate.py"}" "$@"\n')
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    gates = tmp_path / "gates"
    gates.mkdir()
    background.env = {**tmux_env, "PATH": f"{folder}{os.pathsep}{tmux_env['PATH']}", "FAKE_CLAUDE_GATES": str(gates)}
    background.ralph("run", "-n", "5", "--agent", "claude", "--max-cost", "5", "-t", "30m")
    (gates / "go-1").touch()
    assert wait_until(lambda: status(feature).get("iteration") == 2 and bool(status(feature).get("lastOutputAt")))
    return gates


@pytest.fixture
def sized_servers(tmux_env: dict[str, str]) -> Iterator[None]:
    """The tmux servers of the three sizes, killed afterwards."""
    yield
    for width, _ in SIZES:
        tmux(tmux_env, "-L", f"m{width}", "kill-server")


def test_the_monitor_at_three_sizes_and_ralph_status_agree(
    project: Path, feature: Path, held_run: Path, tmux_env: dict[str, str], background: Background, sized_servers: None
) -> None:
    command = f"{PYTHON} -m ralphloop monitor -f feat"
    # one tmux server a size: tmux 3.3a's server was seen to crash (SIGSEGV) on a loaded machine when a second
    # detached session of another size was made beside the first
    # a shell's COLUMNS and LINES of another terminal, inherited by each pane: the monitor draws to its own screen
    stale = {**tmux_env, "COLUMNS": "80", "LINES": "24"}
    for width, height in SIZES:
        tmux(stale, "-L", f"m{width}", "new-session", "-d", "-s", f"m{width}", "-x", str(width), "-y", str(height),
             "-c", str(project), command)  # fmt: skip

    def screen(width: int) -> str:
        return tmux(tmux_env, "-L", f"m{width}", "capture-pane", "-p", "-t", f"=m{width}:")

    def ready(width: int) -> bool:
        shown = screen(width)
        lines = shown.rstrip("\n").split("\n")
        whole = len(lines) == SIZES_BY_WIDTH[width] and lines[-1].startswith("╰")  # a frame drawn to the end
        return whole and "last output" in shown and "ETA ~" in shown and "Bash: pytest -q" in shown

    for width, height in SIZES:
        assert wait_until(lambda width=width: ready(width)), screen(width)  # type: ignore[misc]
        shown = screen(width)
        lines = shown.rstrip("\n").split("\n")
        assert len(lines) == height and all(len(line) <= width for line in lines), shown
        # the header: how far, how much, when; the story, what the agent is doing, the events, the log
        assert "ralph monitor · feat · claude · claude-opus-4-5-20251101" in shown
        assert "Status     running" in shown
        assert re.search(r"Iteration  2 / 5 · \d\d:\d\d of 30:00 · last output [0-9hms]+ ago", shown), shown
        assert "Task       S-2 - Story 2" in shown
        assert re.search(r"1/3 stories pass · ETA ~\d\d:\d\d \(≈ [0-9hms]+\)", shown), shown
        assert re.search(r"Elapsed    [0-9hms]+ since \d\d:\d\d", shown), shown
        assert "Spent      $0.60 of $5.00" in shown
        assert "Tokens     100 in / 400 out tokens" in shown
        assert "Doing      ⚙ Bash: pytest -q" in shown
        assert "iteration 1 started: S-1 Story 1" in shown or "S-1 done" in shown  # recent events
        assert "Working on S-2: first the tests, then the code." in shown  # the log's last lines
        assert lines[-1].startswith("╰"), shown  # the whole height used, the log's box closed on the last line
        assert not any("…" in line for line in lines[:9]), shown  # the header's lines whole, none cut
        assert ("Circuit    CLOSED" in shown) == (height >= 30)  # a short screen keeps to what needs a look

    # `ralph status` says the same, once
    done = subprocess.run(
        [PYTHON, "-m", "ralphloop", "status", "-f", "feat"], cwd=project, env=background.env, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    said = done.stdout
    assert re.search(r"Iteration:  2 / 5 · \d\d:\d\d of 30:00 · last output [0-9hms]+ ago", said), said
    assert re.search(r"Stories:    1 / 3 pass  \[###-------\]  ETA ~\d\d:\d\d \(≈ [0-9hms]+\)", said), said
    assert re.search(r"Elapsed:    [0-9hms]+ since \d\d:\d\d", said), said
    assert "Spent:      $0.60 of $5.00, 100 in / 400 out tokens (this run) (claude-opus-4-5-20251101)" in said
