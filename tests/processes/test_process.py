"""run_agent_process with real small Python processes: streaming, the log, stdin, exit codes, limits."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import AgentCommand, ProcessOutcome
from ralphloop.core.runner import ProcessLimits
from ralphloop.processes.iteration_log import _TRUNCATED, IterationLog
from ralphloop.processes.local import run_agent_process

PY = sys.executable


class Run:
    """One run's stdout chunks, output-hook calls and log file."""

    def __init__(self, tmp_path: Path) -> None:
        self.cwd = tmp_path
        self.log = tmp_path / "iteration-1.log"
        self.stdout = bytearray()
        self.hooked: list[tuple[str, bytes]] = []

    def __call__(
        self,
        code: str,
        *,
        stdin: bytes = b"",
        env: dict[str, str] | None = None,
        limits: ProcessLimits | None = None,
        cancel: CancelToken | None = None,
        argv: tuple[str, ...] | None = None,
    ) -> ProcessOutcome:
        token = cancel or CancelToken()
        try:
            return run_agent_process(
                AgentCommand(argv=argv or (PY, "-c", code), env=env or {}, stdin=stdin),
                cwd=str(self.cwd),
                log_path=str(self.log),
                limits=limits or ProcessLimits(timeout_s=60, kill_grace_s=2),
                cancel=token,
                on_stdout=self.stdout.extend,
                on_output=lambda name, data: self.hooked.append((name, data)),
            )
        finally:
            if cancel is None:
                token.close()

    def log_bytes(self) -> bytes:
        return self.log.read_bytes()


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def test_stdout_goes_to_the_callback_and_the_log(run: Run) -> None:
    result = run("import sys\nfor n in range(3):\n    print(f'line {n}', flush=True)\nsys.stdout.write('no newline')")
    expected = b"line 0\nline 1\nline 2\nno newline"
    assert bytes(run.stdout) == expected
    assert run.log_bytes() == expected
    assert result.exit_code == 0
    assert result.stdout_bytes == len(expected)
    assert not result.timed_out
    assert not result.interrupted
    assert result.start_error is None
    assert b"".join(data for name, data in run.hooked if name == "stdout") == expected


def test_stderr_lines_are_logged_behind_a_mark(run: Run) -> None:
    result = run("import sys\nsys.stderr.write('first\\nsecond\\nlast without newline')")
    assert run.log_bytes() == b"[stderr] first\n[stderr] second\n[stderr] last without newline\n"
    assert bytes(run.stdout) == b""
    assert result.stderr_tail == "first\nsecond\nlast without newline"
    assert b"".join(data for name, data in run.hooked if name == "stderr") == b"first\nsecond\nlast without newline"


def test_a_stderr_line_after_unfinished_stdout_starts_its_own_line(tmp_path: Path) -> None:
    """Otherwise `[stderr] <promise>...` would sit inside a stdout line and be read as the agent's text."""
    log = IterationLog(str(tmp_path / "iteration-1.log"), 1024)
    log.stdout(b"working on S-1")
    log.stderr(b"warning\n")
    log.stdout(b"done\n")
    log.stderr(b"second\n")
    log.close()
    assert (tmp_path / "iteration-1.log").read_bytes() == b"working on S-1\n[stderr] warning\ndone\n[stderr] second\n"


def test_stderr_and_stdout_both_reach_the_log(run: Run) -> None:
    code = "import sys\nprint('out', flush=True)\nsys.stderr.write('err\\n')\nsys.stderr.flush()\nprint('out2')"
    run(code)
    lines = run.log_bytes().splitlines()
    assert sorted(lines) == sorted([b"out", b"[stderr] err", b"out2"])
    assert lines.index(b"out") < lines.index(b"out2")


def test_a_large_stdin_is_delivered_intact(run: Run) -> None:
    payload = os.urandom(1024 * 1024)
    code = "import hashlib, sys\ndata = sys.stdin.buffer.read()\nprint(len(data), hashlib.sha256(data).hexdigest())"
    result = run(code, stdin=payload)
    assert result.exit_code == 0
    assert bytes(run.stdout).split() == [str(len(payload)).encode(), hashlib.sha256(payload).hexdigest().encode()]


def test_empty_stdin_is_closed_at_once(run: Run) -> None:
    result = run("import sys\nprint(len(sys.stdin.buffer.read()))")
    assert result.exit_code == 0
    assert bytes(run.stdout) == b"0\n"


def test_child_that_ignores_stdin_still_finishes(run: Run) -> None:
    result = run("print('not reading')", stdin=b"x" * (4 * 1024 * 1024))
    assert result.exit_code == 0
    assert bytes(run.stdout) == b"not reading\n"


@pytest.mark.parametrize("code", [0, 1, 7, 255])
def test_exit_code_is_reported(run: Run, code: int) -> None:
    assert run(f"import sys\nsys.exit({code})").exit_code == code


def test_death_by_signal_is_a_negative_exit_code(run: Run) -> None:
    result = run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert result.exit_code == -9


def test_command_env_is_added_to_the_environment(run: Run) -> None:
    run("import os\nprint(os.environ['RALPH_ITERATION'], 'PATH' in os.environ)", env={"RALPH_ITERATION": "4"})
    assert bytes(run.stdout) == b"4 True\n"


def test_runs_in_the_given_folder(run: Run, tmp_path: Path) -> None:
    run("import os\nprint(os.getcwd())")
    assert bytes(run.stdout).decode().strip() == str(tmp_path)


def test_log_is_bounded_with_a_marker_but_all_output_is_read(run: Run) -> None:
    limit = 10_000
    code = "import sys\nfor _ in range(200):\n    sys.stdout.write('y' * 1023 + '\\n')\nsys.stderr.write('late\\n')"
    result = run(code, limits=ProcessLimits(timeout_s=60, kill_grace_s=2, log_max_bytes=limit))
    log = run.log_bytes()
    assert len(log) <= limit + len(_TRUNCATED)
    assert log.endswith(_TRUNCATED)
    assert b"log limit reached" in log
    assert log.startswith(b"y" * 1023 + b"\n")
    assert result.stdout_bytes == 200 * 1024
    assert len(run.stdout) == 200 * 1024
    assert result.exit_code == 0


def test_log_is_appended_to_not_replaced(run: Run) -> None:
    run.log.write_bytes(b"earlier\n")
    run("print('now')")
    assert run.log_bytes() == b"earlier\nnow\n"


def test_missing_executable_is_a_start_error(run: Run, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    result = run("", argv=(missing, "-p"))
    assert result.start_error == f"{missing}: command not found"
    assert result.exit_code is None
    assert not result.timed_out
    assert not result.interrupted
    assert run.log.exists()
    assert run.log_bytes() == b""
    assert bytes(run.stdout) == b""


def test_not_executable_is_a_start_error(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = run("", argv=(str(script),))
    assert result.start_error is not None
    assert result.start_error.startswith(f"{script}: ")
    assert result.exit_code is None


def test_cancel_before_the_call_is_an_interrupted_outcome(run: Run) -> None:
    token = CancelToken()
    token.set()
    try:
        result = run("import time\ntime.sleep(60)", cancel=token, limits=ProcessLimits(timeout_s=20, kill_grace_s=1))
    finally:
        token.close()
    assert result.interrupted
    assert not result.timed_out
    assert result.exit_code is not None
    assert result.exit_code != 0
    assert token.active_pgid is None


def test_timeout_stops_the_process(run: Run) -> None:
    result = run(
        "import sys, time\nprint('started', flush=True)\ntime.sleep(60)",
        limits=ProcessLimits(timeout_s=0.5, kill_grace_s=1),
    )
    assert result.timed_out
    assert not result.interrupted
    assert result.exit_code is not None
    assert result.exit_code < 0
    assert bytes(run.stdout) == b"started\n"
