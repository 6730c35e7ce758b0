"""A run nobody can see any more: its terminal hung up (an SSH connection dropped, a tmux pane killed: the pty's
other side closes, the kernel sends SIGHUP and every later write to the terminal fails with EIO), or the reader of
its output left (`ralph run | head`: every later write fails with EPIPE).

Either way ralph stops as on Ctrl+C: the agent's whole process group is stopped, the run is recorded `interrupted`
(status.json ends with its exit reason) and ralph exits 130, without a traceback (an internal error would be saved
in RALPH_HOME/errors.log, and shown on a stderr the pipe tests keep).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path

import psutil

from tests.conftest import PYTHON, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import entry_fields, progress_entries, read_pid, wait_dead, wait_until
from tests.integration.on_terminal import OnTerminal, terminal_env

LIMIT = "Claude AI usage limit reached|1893456000"  # 2030-01-01T00:00:00Z


def _tree(pid: int) -> list[int]:
    return [child.pid for child in psutil.Process(pid).children(recursive=True)]


def _recorded_interrupted(feature: Path, ralph_env: dict[str, str]) -> None:
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"], status["inIteration"]) == ("interrupted", "interrupted", False)
    errors = Path(ralph_env["RALPH_HOME"]) / "errors.log"
    assert not errors.exists(), errors.read_text()


def test_a_terminal_that_hangs_up_stops_the_agent_and_records_the_run_interrupted(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    agent = agent_cmd("hang_with_grandchild.py", str(pidfile))
    run = OnTerminal(["run", "-n", "3", "--agent-cmd", agent], project, terminal_env(ralph_env), background)
    try:
        working = wait_until(lambda: "Running…" in run.text and read_pid(pidfile) is not None)
        assert working and run.proc.poll() is None, run.text
        tree = _tree(run.proc.pid)
        background.adopt_tree(run.proc.pid)
        assert read_pid(pidfile) in tree

        run.hang_up()  # while the spinner turns: its next frame, the summary, every message hit a dead terminal
        code = run.proc.wait(timeout=60)
    finally:
        run.close()

    assert code == 130
    for pid in tree:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived the hang-up"
    _recorded_interrupted(feature, ralph_env)
    entries = progress_entries((feature / "progress.txt").read_text())
    assert [entry_fields(entry)["Status"] for entry in entries] == ["interrupted"]
    assert not (feature / "logs" / "iteration-2.log").exists()


def test_a_terminal_that_hangs_up_while_ralph_asks_ends_the_run_interrupted(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    # a usage limit on a terminal: ralph asks "Wait or exit?" and reads the answer from the terminal
    agent = agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT)
    run = OnTerminal(["run", "-n", "3", "--agent-cmd", agent], project, terminal_env(ralph_env), background)
    try:
        assert wait_until(lambda: "Wait or exit?" in run.text or run.proc.poll() is not None), run.text
        assert run.proc.poll() is None, run.text

        run.hang_up()
        code = run.proc.wait(timeout=60)
    finally:
        run.close()

    assert code == 130  # not "exit" (2): nobody answered, the run was stopped
    _recorded_interrupted(feature, ralph_env)
    assert not (feature / "logs" / "iteration-2.log").exists()


def _working_on_a_pipe(
    project: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path, agent: str, pidfile: Path
) -> tuple[subprocess.Popen[bytes], int, Path]:
    """`ralph run` writing to a pipe the test reads, its stderr in a file; returns once the agent works."""
    reader, writer = os.pipe()
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as errors:
        proc = subprocess.Popen(
            [PYTHON, "-m", "ralphloop", "run", "-n", "3", "--agent-cmd", agent],
            cwd=project,
            env=ralph_env,
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=errors,
        )
    os.close(writer)  # ralph holds the only writing end
    background.started.append(proc)  # type: ignore[arg-type]  # killed on teardown if still running
    assert wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    assert proc.poll() is None, stderr.read_text()
    background.adopt_tree(proc.pid)
    assert os.read(reader, 65536)  # the run's first lines came through
    return proc, reader, stderr


def test_the_reader_of_the_output_leaving_stops_the_agent_at_once(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    agent = agent_cmd("hang_with_grandchild.py", str(pidfile))
    proc, reader, stderr = _working_on_a_pipe(project, ralph_env, background, tmp_path, agent, pidfile)
    tree = _tree(proc.pid)

    os.close(reader)  # the reader leaves while the agent works and ralph has nothing to write
    code = proc.wait(timeout=60)

    errors = stderr.read_text()
    assert code == 130, errors
    assert "Traceback" not in errors
    assert "output pipe is gone" in errors  # stderr is still there: ralph says why it stops
    for pid in tree:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived its reader leaving"
    _recorded_interrupted(feature, ralph_env)
    entries = progress_entries((feature / "progress.txt").read_text())
    assert [entry_fields(entry)["Status"] for entry in entries] == ["interrupted"]


def test_a_ctrl_c_after_the_output_is_gone_is_still_the_first(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    # `ralph run | tee log` and Ctrl+C: tee dies of it too, and ralph may notice the pipe's loss before its own
    # SIGINT. An agent that ignores SIGTERM, and a grace period longer than the test, hold ralph in between.
    (Path(ralph_env["RALPH_HOME"])).mkdir(parents=True, exist_ok=True)
    (Path(ralph_env["RALPH_HOME"]) / "config.yaml").write_text("process:\n  kill_grace_seconds: 3600\n")
    pidfile, terms = tmp_path / "agent.pid", tmp_path / "agent.terms"
    agent = agent_cmd("stubborn.py", str(pidfile), str(terms))
    proc, reader, stderr = _working_on_a_pipe(project, ralph_env, background, tmp_path, agent, pidfile)
    os.close(reader)
    assert wait_until(terms.exists), stderr.read_text()  # the hang-up is being handled: the agent was asked to stop

    proc.send_signal(signal.SIGINT)
    assert wait_until(lambda: "quit at once" in stderr.read_text() or proc.poll() is not None)
    errors = stderr.read_text()
    assert "Ctrl+C again to quit at once" in errors and "stopped at once" not in errors, errors

    proc.send_signal(signal.SIGINT)  # now the second: no more waiting for the agent
    assert proc.wait(timeout=60) == 130
    agent_pid = read_pid(pidfile)
    assert agent_pid is not None and wait_dead(agent_pid)
    _recorded_interrupted(feature, ralph_env)


def test_ralph_run_piped_into_head_ends_interrupted(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    # The agent finishes nothing until the test lets it, and the test never does: only ralph noticing that
    # `head` left (at its next write, or at once) can end this run.
    gates = tmp_path / "gates"
    gates.mkdir()
    ralph = shlex.join(
        [PYTHON, "-m", "ralphloop", "run", "-n", "3", "--agent-cmd", agent_cmd("gate_agent.py", str(gates))]
    )
    code_file, stderr = tmp_path / "code", tmp_path / "stderr.txt"
    line = f"{{ {ralph} 2>{shlex.quote(str(stderr))}; echo $? > {shlex.quote(str(code_file))}; }} | head -n 1"
    shell = subprocess.Popen(["sh", "-c", line], cwd=project, env=ralph_env, stdout=subprocess.PIPE, text=True)
    background.started.append(shell)  # with ralph in its tree: killed on teardown if still running
    shown, _ = shell.communicate(timeout=60)  # the pipeline ends when ralph does
    assert len(shown.splitlines()) == 1, shown  # head printed its line and left

    errors = stderr.read_text()
    assert code_file.read_text().strip() == "130", errors
    assert "Traceback" not in errors
    agent = read_pid(gates / "pid-1")
    if agent is not None:  # the agent may not have started before head left
        assert wait_dead(agent)
    _recorded_interrupted(feature, ralph_env)
    assert not (feature / "logs" / "iteration-2.log").exists()
