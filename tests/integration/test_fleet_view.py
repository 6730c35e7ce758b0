"""The real `ralph status` and `ralph monitor` over the files of a parallel run: six loops in real git worktrees, one
of them a real `ralph run` (tests/fleet_feature.py). Every loop is shown, its numbers as its own `ralph status` says
them, a failed loop's kept worktree with a command that removes it when pasted, and the merge queue."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PYTHON, RalphRunner
from tests.fleet_feature import coordinator, git, held, make_fleet, worktree_of, write_fleet
from tests.integration.conftest import Background
from tests.integration.helpers import wait_until
from tests.integration.test_monitor_cmd import monitor

RESUME = "ralph run --parallel 3 -f feat"


@pytest.fixture
def fleet(project: Path, feature: Path, ralph_env: dict[str, str], tmp_path: Path) -> Path:
    return make_fleet(project, ralph_env, tmp_path)


def status(ralph: RalphRunner, *args: str, cwd: Path | None = None, **env: str) -> str:
    done = ralph("status", *args, cwd=cwd, env=env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def rows(text: str) -> dict[str, str]:
    return {line.split()[0]: line for line in text.splitlines() if line.startswith("  S-")}


def test_status_shows_every_loop_as_its_own_status_says(ralph: RalphRunner, project: Path, fleet: Path) -> None:
    text = status(ralph)
    assert text.startswith("Feature:    feat  (")  # the usual header first
    lines = text.splitlines()
    at = lines.index("Fleet:      stopped (killed?) · 1 / 6 stories merged · $2.10 · up to 3 loops at once")
    assert lines[at + 1] == f"Resume:     {RESUME}  (adopts the loops, worktrees and queue it left)"
    found = rows(text)
    assert list(found) == ["S-1", "S-2", "S-3", "S-4", "S-5", "S-6"]
    assert found["S-1"] == "  S-1  merged    attempt 1 of 3 · iteration 2 / 10 · $0.25 · at 0123456789"  # loops/S-1
    assert found["S-5"] == "  S-5  merging   attempt 2 of 3 · iteration 3 / 10 · $0.0041"
    assert found["S-6"] == "  S-6  waiting   after S-1"
    assert lines[-1] == "Queue:      S-4 (merged in this order)"
    # S-2's loop is a real run: its row says what `ralph status` in its own worktree says
    own = status(ralph, cwd=worktree_of(project, "S-2"))
    assert "Iteration:  1 / 1\n" in own and re.search(r"^Spent:      \$0\.60, ", own, re.MULTILINE), own
    assert found["S-2"] == "  S-2  running   attempt 1 of 3 · iteration 1 / 1 · $0.60"
    # narrower: every row cut to the width, the commands whole
    narrow = status(ralph, COLUMNS="60").splitlines()
    block = narrow[narrow.index(next(line for line in narrow if line.startswith("Fleet:"))) :]
    assert all(len(line) <= 60 for line in block if not line.startswith(("Resume:", "       git "))), block
    assert f"Resume:     {RESUME}  (adopts the loops, worktrees and queue it left)" in block
    assert sum(line.endswith("…") for line in block) == 5, (
        block
    )  # the fleet's line, S-1, S-3 and its kept worktree, S-4


def test_the_printed_command_removes_the_failed_loops_worktree(
    ralph: RalphRunner, project: Path, fleet: Path, ralph_env: dict[str, str]
) -> None:
    kept = worktree_of(project, "S-3")
    lines = status(ralph).splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("  S-3  failed"))
    assert lines[at].endswith("· $0.75 · rebase conflict in app.txt, 3 attempts of 3")
    assert lines[at + 1] == f"       kept: {kept} (branch ralph/feat/S-3); remove both with:"
    command = lines[at + 2].strip()
    pasted = subprocess.run(["sh", "-c", command], cwd=project, env=ralph_env, check=False)
    assert pasted.returncode == 0
    assert not kept.exists() and git(project, ralph_env, "branch", "--list", "ralph/feat/S-3") == ""
    assert "git worktree remove" not in status(ralph)


def test_status_json_adds_the_fleet_and_keeps_every_key(
    ralph: RalphRunner, project: Path, fleet: Path, ralph_env: dict[str, str]
) -> None:
    with held(coordinator(fleet)):
        report = json.loads(status(ralph, "--json"))
        assert "Fleet:      running (PID " in status(ralph)
    found = report["fleet"]
    assert report["fleetNote"] is None
    assert found["alive"] is True and found["status"] == "running" and found["pid"] == os.getpid()
    assert [loop["story"] for loop in found["loops"]] == ["S-1", "S-2", "S-3", "S-4", "S-5", "S-6"]
    assert found["queue"] == ["S-4"] and found["costUsd"] == pytest.approx(2.1041)
    # each loop's report is its own `ralph status --json`
    own = json.loads(status(ralph, "--json", cwd=worktree_of(project, "S-2")))
    assert found["loops"][1]["report"]["iteration"] == own["iteration"] == 1
    assert found["loops"][1]["report"]["costUsd"] == own["costUsd"] == 0.6
    assert found["loops"][5]["report"] is None  # waiting: no records yet
    # without a fleet: the same keys, the fleet null
    (fleet / "fleet.json").unlink()
    alone = json.loads(status(ralph, "--json"))
    assert set(alone) == set(report) and alone["fleet"] is None and alone["fleetNote"] is None
    # a fleet.json that is a FIFO: status answers, and says why no fleet is shown
    os.mkfifo(fleet / "fleet.json")
    text = status(ralph)
    assert text.splitlines()[-1].startswith("Note:       the parallel run's fleet is not shown: ")
    assert "FIFO" in text.splitlines()[-1]
    assert json.loads(status(ralph, "--json"))["fleetNote"].startswith("the parallel run's fleet is not shown: ")


def test_the_monitor_on_a_pipe_follows_the_fleet_to_its_end(background: Background, fleet: Path) -> None:
    """`--wait` waits past the ended fleet; a coordinator that starts (its lock taken) is followed, line by line,
    until it ends."""
    watcher = monitor(background, "--wait")
    assert wait_until(lambda: watcher.saw("Waiting for Ralph to start...")), watcher.text()
    with held(coordinator(fleet)):
        assert wait_until(lambda: watcher.saw(f"fleet running (PID {os.getpid()}) · 1 / 6 stories merged")), (
            watcher.text()
        )
        assert wait_until(lambda: watcher.saw("queue: S-4 (merged in this order)")), watcher.text()
        assert watcher.saw("] S-4  queued    attempt 1 of 3 · iteration 1 / 10 · $0.50 · next to merge")
        data = json.loads((fleet / "fleet.json").read_text())
        data["loops"][3]["state"] = "merged"
        write_fleet(fleet, **{key: data[key] for key in ("loops", "parallel")}, queue=[], storiesMerged=2)
        assert wait_until(lambda: watcher.saw("] S-4  merged    attempt 1 of 3")), watcher.text()
        write_fleet(fleet, **{key: data[key] for key in ("loops", "parallel")}, status="complete", storiesMerged=2)
    assert watcher.proc.wait(timeout=30) == 0, watcher.text()
    watcher.thread.join(timeout=10)
    lines = watcher.lines
    assert "The parallel run has ended: complete" in lines
    assert lines[lines.index("The parallel run has ended: complete") + 1].startswith("Fleet:      complete · 2 / 6")
    assert sum("S-1  merged" in line for line in lines) == 2  # printed once when seen, once in the summary
    assert "\x1b" not in watcher.text()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_monitor_at_80x24_shows_every_loop(project: Path, fleet: Path, tmux_env: dict[str, str]) -> None:
    def tmux(*args: str) -> str:
        done = subprocess.run(["tmux", "-L", "fleet", *args], env=tmux_env, capture_output=True, text=True, check=False)
        return done.stdout

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "=fleet:")

    with held(coordinator(fleet)):
        try:
            tmux("new-session", "-d", "-s", "fleet", "-x", "80", "-y", "24", "-c", str(project),
                 f"{PYTHON} -m ralphloop monitor")  # fmt: skip
            assert wait_until(lambda: "queue: S-4" in screen() and "S-6" in screen()), screen()
            shown = screen()
        finally:
            tmux("kill-server")
    lines = shown.rstrip("\n").split("\n")
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), shown
    assert lines[0] == "ralph monitor · feat · parallel run"
    assert lines[1].startswith(f"Fleet  running (PID {os.getpid()}) · 1 / 6 stories merged · $2.10")
    assert re.search(r"story +state +attempt +iteration +cost +doing", shown), shown
    for story, state in (("S-1", "merged"), ("S-2", "running"), ("S-3", "failed"), ("S-6", "waiting")):
        assert re.search(rf"│  {story} +{state} ", shown), shown
    assert re.search(r"S-3 +failed +3 of 3 +4 / 10 +\$0\.75 +rebase conflict", shown), shown
