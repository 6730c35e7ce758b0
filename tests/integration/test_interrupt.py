"""SIGINT / SIGTERM during an iteration: the agent tree is stopped, records saved, exit 130. During a hook (any
lifecycle hook, the end hooks included) one Ctrl+C stops it the same way: SIGTERM to its group, SIGKILL after the
grace period. A second Ctrl+C, wherever ralph waits (a hook, a git hook while it commits), kills everything at
once, and status.json still ends with the exit reason `interrupted`."""

from __future__ import annotations

import shlex
import signal
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.conftest import PYTHON, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import entry_fields, progress_entries, read_pid, wait_dead, wait_until


@pytest.mark.parametrize(
    ("signum", "setsid"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGINT, True)],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGINT-grandchild-own-session"],
)
def test_signal_stops_the_run_and_saves_records(feature, background, tmp_path, signum, setsid):
    pidfile = tmp_path / "grandchild.pid"
    agent = agent_cmd("hang_with_grandchild.py", str(pidfile), *(["--setsid"] if setsid else []))
    proc = background.ralph("run", "-n", "3", "--agent-cmd", agent)
    started = wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    assert started and proc.poll() is None, proc.communicate(timeout=30) if proc.poll() is not None else "no start"
    grandchild = read_pid(pidfile)
    assert grandchild is not None
    background.adopt_tree(proc.pid)
    descendants = [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
    assert grandchild in descendants

    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stdout + stderr
    assert "To continue, run: ralph run" in stdout
    resume = next(line for line in stdout.splitlines() if line.startswith("To continue, run: "))
    words = shlex.split(resume.removeprefix("To continue, run: "))
    assert words[:2] == ["ralph", "run"], resume
    assert "feat" in words[2:], resume
    # seed 004: the final summary of what was done so far, before the command to continue
    assert "FINAL SUMMARY" in stdout and stdout.index("FINAL SUMMARY") < stdout.index("To continue, run:")
    assert "Outcomes:        1 interrupted" in stdout
    for pid in descendants:
        assert wait_dead(pid), f"process {pid} of the agent's tree survived the {signum.name}"

    status = read_json(feature / "status.json")
    assert status["status"] == "interrupted"
    assert status["exitReason"] == "interrupted"
    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 1
    assert entry_fields(entries[0])["Status"] == "interrupted"
    # Only one iteration was started: the loop did not go on after the signal.
    assert not (feature / "logs" / "iteration-2.log").exists()
    assert read_json(feature / "state.json")["last_outcome"]["status"] == "interrupted"


def _configure(project: Path, text: str) -> None:
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + text)


def _stubborn(tmp_path: Path) -> tuple[str, Path, Path]:
    """A command that ignores SIGTERM (noting each in a file) until a SIGKILL; its PID file and TERM file."""
    pidfile, terms = tmp_path / "stubborn.pid", tmp_path / "stubborn.terms"
    return agent_cmd("stubborn.py", str(pidfile), str(terms)), pidfile, terms


def _ralph_to_files(background: Background, tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Path]:
    """`ralph ARGS` with stdout and stderr in files the test can read while it runs."""
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with stdout.open("w") as out, stderr.open("w") as err:
        proc = subprocess.Popen(
            [PYTHON, "-m", "ralphloop", *args],
            cwd=background.project,
            env=background.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            text=True,
        )
    background.started.append(proc)
    return proc, stderr


def _stopped_at_once(proc: subprocess.Popen[str], stderr: Path, feature: Path, stubborn: int) -> None:
    """The second Ctrl+C: ralph quit at once, with the interrupted code and no traceback, killing what it waited
    for; status.json still ends with its exit reason."""
    code = proc.wait(timeout=60)
    errors = stderr.read_text()
    assert code == 130, errors
    assert "ralph: stopped at once" in errors and "Traceback" not in errors
    assert wait_dead(stubborn), "the process ralph was waiting for survived the second Ctrl+C"
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"], status["inIteration"]) == ("interrupted", "interrupted", False)


def test_a_second_ctrl_c_during_a_hook_kills_it_and_still_records_the_run_interrupted(
    project: Path, feature: Path, background: Background, tmp_path: Path
) -> None:
    hook, pidfile, terms = _stubborn(tmp_path)
    # A hook that ignores SIGTERM and a grace period far longer than the test: only the second Ctrl+C ends it.
    _configure(project, f"process:\n  kill_grace_seconds: 3600\nhooks:\n  pre_iteration: {shlex.quote(hook)}\n")
    proc, stderr = _ralph_to_files(background, tmp_path, "run", "-n", "3", "--agent-cmd", agent_cmd("story_agent.py"))
    assert wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    stubborn = read_pid(pidfile)
    assert stubborn is not None and proc.poll() is None, stderr.read_text()
    background.adopt(stubborn)

    proc.send_signal(signal.SIGINT)
    assert wait_until(terms.exists), "the first Ctrl+C did not stop the hook's group with SIGTERM"
    proc.send_signal(signal.SIGINT)

    _stopped_at_once(proc, stderr, feature, stubborn)


def test_a_second_ctrl_c_while_ralph_commits_kills_the_git_hook_and_still_records_the_run_interrupted(
    project: Path, feature: Path, background: Background, tmp_path: Path
) -> None:
    # The iteration is recorded; ralph commits its work and git runs a pre-commit hook that never ends.
    git_hook, pidfile, _ = _stubborn(tmp_path)
    hook_path = project / ".git" / "hooks" / "pre-commit"
    hook_path.write_text(f"#!/bin/sh\nexec {git_hook}\n")
    hook_path.chmod(0o755)
    _configure(project, "git:\n  auto_commit: true\n")
    agent = agent_cmd("story_agent.py", "--no-commit")
    proc, stderr = _ralph_to_files(background, tmp_path, "run", "-n", "3", "--agent-cmd", agent)
    assert wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    stubborn = read_pid(pidfile)
    assert stubborn is not None and proc.poll() is None, stderr.read_text()
    background.adopt(stubborn)

    proc.send_signal(signal.SIGINT)  # sent to ralph alone (not to git, as a terminal's Ctrl+C would)
    assert wait_until(lambda: "Ctrl+C again to quit at once" in stderr.read_text()), stderr.read_text()
    proc.send_signal(signal.SIGINT)

    _stopped_at_once(proc, stderr, feature, stubborn)


@pytest.mark.parametrize(
    ("event", "limit"), [("on_complete", "3"), ("on_halt", "1"), ("pre_iteration", "3")], ids=lambda value: value
)
def test_one_ctrl_c_stops_a_running_hook_and_ralph_ends_interrupted(
    project: Path, feature: Path, background: Background, tmp_path: Path, event: str, limit: str
) -> None:
    hook, pidfile, terms = _stubborn(tmp_path)
    _configure(project, f"process:\n  kill_grace_seconds: 1\nhooks:\n  {event}: {shlex.quote(hook)}\n")
    # three stories done (on_complete), one iteration of three (on_halt: max iterations), or the first iteration
    proc, stderr = _ralph_to_files(background, tmp_path, "run", "-n", limit, "--agent-cmd", agent_cmd("story_agent.py"))
    assert wait_until(lambda: read_pid(pidfile) is not None or proc.poll() is not None)
    stubborn = read_pid(pidfile)
    assert stubborn is not None and proc.poll() is None, stderr.read_text()
    background.adopt(stubborn)

    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=60)

    errors = stderr.read_text()
    assert code == 130, errors
    assert "Traceback" not in errors
    assert "TERM" in terms.read_text()  # asked first, with SIGTERM (which it ignored) ...
    assert wait_dead(stubborn)  # ... then killed, after the grace period
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("interrupted", "interrupted")


# ralph's own code in a real process: the run's Interrupts installed, then a command run through ralph's pump while
# a signal comes; the script prints what the test checks.
_INSTALLED = """
import os, resource, signal, sys, threading, time
from ralphloop.cli.interrupts import Interrupts
from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import AgentCommand
from ralphloop.core.runner import ProcessLimits
from ralphloop.processes.local import run_agent_process

cancel = CancelToken()
Interrupts(cancel, sys.argv[1]).install()

def run(*argv):
    return run_agent_process(
        AgentCommand(argv=argv, env={}, stdin=b""), cwd=".", log_path=sys.argv[2],
        limits=ProcessLimits(timeout_s=120.0), cancel=cancel, on_stdout=lambda data: None,
    )
"""


def _in_ralph(tmp_path: Path, script: str) -> tuple[list[str], str]:
    """`script` run after _INSTALLED in a fresh interpreter: the words it printed, and its stderr."""
    done = subprocess.run(
        [PYTHON, "-c", _INSTALLED + script, str(tmp_path / "status.json"), str(tmp_path / "command.log")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split(), done.stderr


# A command that would run for a minute, and a SIGINT the kernel hands to another thread (as it may when the main
# thread is busy, and as happens in effect when a signal comes just before the main thread enters its poll): the
# handler cannot interrupt the poll.
_SIGNAL_ON_ANOTHER_THREAD = """
def press():
    time.sleep(0.5)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=press).start()
began = time.monotonic()
outcome = run("sleep", "60")
print(f"{outcome.interrupted} {time.monotonic() - began:.1f}")
"""


def test_a_ctrl_c_the_main_thread_does_not_receive_still_stops_the_command_at_once(tmp_path: Path) -> None:
    (interrupted, took), stderr = _in_ralph(tmp_path, _SIGNAL_ON_ANOTHER_THREAD)
    assert interrupted == "True", took
    assert float(took) < 30, f"the Ctrl+C waited for the command to end on its own ({took} s)"
    assert "Ctrl+C again to quit at once" in stderr


# A signal whose handler does not cancel (a plug-in's) wakes the wait too: the command runs on to its end, and the
# wait does not spin on the byte the wake-up left.
_SIGNAL_THAT_DOES_NOT_CANCEL = """
signal.signal(signal.SIGUSR1, lambda signum, frame: None)
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGUSR1)).start()
began, used = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
outcome = run("sleep", "1.5")
now = resource.getrusage(resource.RUSAGE_SELF)
cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
print(f"{outcome.interrupted} {outcome.exit_code} {time.monotonic() - began:.2f} {cpu:.2f}")
"""


def test_a_signal_that_does_not_cancel_leaves_the_command_running_without_a_busy_wait(tmp_path: Path) -> None:
    (interrupted, code, took, cpu), _ = _in_ralph(tmp_path, _SIGNAL_THAT_DOES_NOT_CANCEL)
    assert (interrupted, code) == ("False", "0"), (interrupted, code)
    assert float(took) >= 1.4, took
    assert float(cpu) < 0.5, f"the wait spun on the wake-up byte ({cpu} s of CPU in {took} s)"
