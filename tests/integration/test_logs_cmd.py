"""`ralph logs N` and `ralph analyze N`: an iteration's log by its number, through the real `ralph`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd
from tests.integration import replays
from tests.integration.helpers import ESC, assert_one_line_error


class Replay(replays.Replay):
    CLI = "claude"


@pytest.fixture
def claude_logs(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> Path:
    """Two iterations of a replayed Claude Code run (tools, text, a result); the feature stays in .ralph/."""
    Replay(tmp_path, ["work"]).configure(project)
    done = ralph("run", "-n", "2", "--no-archive", "--on-usage-limit", "exit")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return feature / "logs"


def test_logs_reads_the_iteration_through_its_agents_reader(claude_logs: Path, ralph: RalphRunner) -> None:
    done = ralph("logs", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Iteration 1 (claude, S-1, complete): .ralph/feat/logs/iteration-1.log"
    assert any(line.startswith("⚙ ") for line in lines)  # the tools it used
    assert any(line.startswith("■ result: ") for line in lines)
    assert not any(line.startswith('{"type"') for line in lines)  # no raw stream-json
    assert ralph("logs").stdout == ralph("logs", "last").stdout == ralph("logs", "2", "-f", "feat").stdout
    assert ralph("logs").stdout.startswith("Iteration 2 ")


def test_raw_is_the_file_as_it_is(claude_logs: Path, ralph: RalphRunner) -> None:
    done = ralph("logs", "1", "--raw")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (claude_logs / "iteration-1.log").read_text()


def test_an_unknown_iteration_names_those_that_have_logs(claude_logs: Path, ralph: RalphRunner) -> None:
    (claude_logs / "iteration-5.log").write_text("an older run's log\n")
    for args in (["logs", "7"], ["analyze", "7"]):
        done = ralph(*args)
        assert_one_line_error(done)
        assert "no log for iteration 7 in .ralph/feat/logs/ (iterations 1–2, 5 have logs)" in done.stderr
    done = ralph("logs", "seven")
    assert_one_line_error(done)
    assert "'seven': not an iteration number (a number, or last)" in done.stderr


def test_agent_escapes_never_reach_the_screen(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    said = tmp_path / "said.txt"
    said.write_text(f"{ESC}]0;owned{ESC}\\{ESC}[31mred words{ESC}[0m\n")
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("crash_with.py", str(said)))
    assert done.returncode == 1, done.stdout + done.stderr
    shown = ralph("logs", "1")
    assert shown.returncode == 0, shown.stderr
    assert "[stderr] red words" in shown.stdout and ESC not in shown.stdout
    assert ESC in ralph("logs", "1", "--raw").stdout  # a pipe gets the bytes as they are


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_log_that_is_no_file_is_refused_at_once(feature: Path, ralph: RalphRunner, kind: str) -> None:
    logs = feature / "logs"
    logs.mkdir()
    log = logs / "iteration-1.log"
    if kind == "fifo":
        os.mkfifo(log)
    else:
        log.symlink_to("/dev/zero")
    for raw in ([], ["--raw"]):
        done = ralph("logs", "1", *raw, timeout=20)
        assert_one_line_error(done)
        assert ".ralph/feat/logs/iteration-1.log" in done.stderr


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


def test_an_archived_feature_says_where_its_logs_went(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    Replay(tmp_path, ["work"]).configure(project)
    done = ralph("run", "--on-usage-limit", "exit")  # every story passes: the feature is archived
    assert done.returncode == 0, done.stdout + done.stderr
    missing = ralph("logs", "-f", "feat")
    assert_one_line_error(missing)
    hint = missing.stderr.rstrip().rsplit(": ", 1)[-1]
    assert hint.startswith("ralph logs -f .ralph/archive/") and hint.endswith("-feat"), missing.stderr
    shown = ralph(*hint.split()[1:], "3")  # the printed command works, with an iteration named
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Iteration 3 (claude, S-3, complete): .ralph/archive/")


def test_analyze_takes_an_iteration_number(claude_logs: Path, ralph: RalphRunner, project: Path) -> None:
    by_path = ralph("analyze", ".ralph/feat/logs/iteration-2.log")
    assert by_path.returncode == 0, by_path.stderr
    for args in (["2"], ["last"], ["2", "-f", "feat"]):
        done = ralph("analyze", *args)
        assert done.returncode == 0, done.stderr
        assert done.stdout == by_path.stdout
    (project / "2").write_text("a file named like a number\n")
    assert ralph("analyze", "./2").stdout.startswith("./2 (text)")  # a path with a slash is a file
    wrong = ralph("analyze", "./2", "-f", "feat")
    assert_one_line_error(wrong)
