"""`ralph logs N` and `ralph analyze N`: an iteration's log by its number, through the real `ralph`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import RalphRunner
from tests.integration import replays
from tests.integration.helpers import assert_one_line_error


class Replay(replays.Replay):
    CLI = "claude"


def test_an_iteration_by_its_number(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    """Two iterations of a replayed Claude Code run (tools, text, a result): `ralph logs N` reads one through
    Claude's reader, `ralph analyze N` analyses it, an unknown number names those that have logs, and once the
    feature is archived the error prints the command that reads its logs there."""
    Replay(tmp_path, ["work"]).configure(project)
    done = ralph("run", "-n", "2", "--no-archive", "--on-usage-limit", "exit")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    logs = feature / "logs"

    shown = ralph("logs", "1")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "Iteration 1 (claude, S-1, complete): .ralph/feat/logs/iteration-1.log"
    assert any(line.startswith("⚙ ") for line in lines)  # the tools it used
    assert any(line.startswith("■ result: ") for line in lines)
    assert not any(line.startswith('{"type"') for line in lines)  # no raw stream-json
    newest = ralph("logs").stdout
    assert newest.startswith("Iteration 2 ") and newest == ralph("logs", "last", "-f", "feat").stdout
    assert ralph("logs", "1", "--raw").stdout == (logs / "iteration-1.log").read_text()  # on a pipe: as it is

    by_path = ralph("analyze", ".ralph/feat/logs/iteration-2.log")
    assert by_path.returncode == 0, by_path.stderr
    assert ralph("analyze", "2").stdout == ralph("analyze", "last", "-f", "feat").stdout == by_path.stdout
    (project / "2").write_text("a file named like a number\n")
    assert ralph("analyze", "./2").stdout.startswith("./2 (text)")  # a path with a slash is a file

    (logs / "iteration-5.log").write_text("an older run's log\n")
    for args in (["logs", "7"], ["analyze", "7"]):
        assert_one_line_error(ralph(*args), "no log for iteration 7 in .ralph/feat/logs/ (iterations 1–2, 5 have logs)")
    assert_one_line_error(ralph("logs", "seven"), "'seven': not an iteration number (a number, or last)")

    assert ralph("archive", "-f", "feat").returncode == 0
    # archived, the feature is still found by its name (and, with nothing active left, without one)
    moved = ralph("logs", "2", "-f", "feat")
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith("Iteration 2 (claude, S-2, complete): .ralph/archive/")
    assert ralph("logs", "2").stdout == moved.stdout
    archived_log = moved.stdout.splitlines()[0].rsplit(": ", 1)[1]
    assert ralph("analyze", "2", "-f", "feat").stdout == ralph("analyze", archived_log).stdout


def test_a_log_that_is_no_file_is_refused_at_once(feature: Path, ralph: RalphRunner) -> None:
    logs = feature / "logs"
    logs.mkdir()
    log = logs / "iteration-1.log"
    os.mkfifo(log)
    for raw in ([], ["--raw"]):
        assert_one_line_error(ralph("logs", "1", *raw, timeout=20), ".ralph/feat/logs/iteration-1.log: not a regular")
    log.unlink()
    log.symlink_to("/dev/zero")
    assert_one_line_error(ralph("logs", "1", timeout=20), ".ralph/feat/logs/iteration-1.log: a symbolic link")


def test_a_huge_log_is_streamed_not_read_whole(feature: Path, project: Path, ralph_env: dict[str, str]) -> None:
    """300 MB of zeros with no newline: shown as one skipped line, in bounded memory."""
    logs = feature / "logs"
    logs.mkdir()
    with open(logs / "iteration-1.log", "wb") as handle:
        handle.write(b'{"type":"system","subtype":"init"}\n[stderr] Error: boom\n')
        handle.truncate(300 * 1024 * 1024)  # sparse: nothing written to disk
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'ralphloop', 'logs', '1'], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stdout.write(done.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=project,
        env=ralph_env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    first, *shown = done.stdout.splitlines()
    code, max_kb = map(int, first.split())
    assert code == 0, done.stderr
    assert "[stderr] Error: boom" in shown and "[a line of more than 16 MB, not shown]" in shown
    assert max_kb < 120 * 1024  # far less than the file
