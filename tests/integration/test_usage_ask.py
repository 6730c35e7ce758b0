"""`--on-usage-limit ask` on a real terminal (a pty): the question is asked, and "exit" stops with code 2.

Seed 003: "Prompt user: wait or exit"; "No response in 30s → Auto-exit". The question says what happens without an
answer; `usage_limit.ask_timeout_seconds` (30) and `usage_limit.on_no_answer` (exit) make it a policy. The tests
that let the question go unanswered configure a timeout of 0 s, so that nothing depends on how fast anything is.
What the engine makes of an answer (a "wait" that beats the default, `on_no_answer: wait`, status.json while the
question waits) is tests/engine/test_usage_ask.py's, in-process; here the terminal's side: the question on a pty, an
answer typed, Enter alone, "no answer", the command to run later, pasted, and a bad setting's error line.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.words.figures import local_time
from tests.conftest import PYTHON, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, set_config, snapshot, wait_until
from tests.integration.on_terminal import OnTerminal, terminal_env

LIMIT = "Claude AI usage limit reached|1893456000"  # 2030-01-01T00:00:00Z


def _read_until(fd: int, needle: bytes, seen: bytearray) -> bool:
    """Read the pty until `needle` shows up or the child closes it (no clock: EOF ends the wait)."""
    while needle not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            return False
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        seen += chunk
    return True


def test_ask_on_a_terminal_and_exit_on_the_answer(
    project: Path, feature: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    cmd = agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "run", "-n", "3", "--agent-cmd", cmd],
        cwd=project,
        env=ralph_env,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        close_fds=True,
    )
    os.close(terminal)
    seen = bytearray()
    try:
        assert _read_until(controller, b"Wait or exit?", seen), seen.decode(errors="replace")
        os.write(controller, b"e\n")
        _read_until(controller, b"\x00never", seen)  # drain until the child closes the terminal
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    output = seen.decode(errors="replace")
    assert code == 2, output
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "usage_limit"
    assert status["usageLimit"]["resetsAt"] == "2030-01-01T00:00:00Z"
    assert status["usageLimit"]["policy"] == "exit"
    assert f"resets at {local_time(datetime(2030, 1, 1, tzinfo=UTC))}" in output  # the user's own zone
    assert "Wait or exit? (exiting in 30s unless told) [w]ait/[e]xit:" in output  # the seed's default, said
    assert read_json(feature / ".circuit_breaker_state")["consecutive_failures"] == 0


# ---------------------------------------------------------------- an unanswered question (seed 003: auto-exit)


def _usage(project: Path, key: str, value: str) -> None:
    """`usage_limit.KEY: VALUE` in the config `ralph init` wrote (which sets the seed's values)."""
    set_config(project, f"  {key}: {'30' if key == 'ask_timeout_seconds' else 'exit'} ", f"  {key}: {value} ")


def _configure(project: Path, agent: str, *, timeout: str = "30", on_no_answer: str = "exit") -> None:
    """The usage-limit question's policy, and the agent as `agent.command` (so that the command ralph prints to
    run later works when pasted, with no flag to remember)."""
    _usage(project, "ask_timeout_seconds", timeout)
    _usage(project, "on_no_answer", on_no_answer)
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"agent:\n  command: {json.dumps(agent)}\n")


def _then_run(output: str) -> list[str]:
    """The command after "Then run:", as the user would paste it (`ralph` is this checkout's `python -m ralphloop`)."""
    found = re.search(r"Then run: (.+)", output)
    assert found, output
    words = shlex.split(found.group(1).strip())
    assert words[0] == "ralph", words
    return words[1:]


def test_a_question_nobody_answers_exits_with_code_2_and_the_command_to_run_later(
    project: Path, feature: Path, ralph, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    _configure(project, agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT), timeout="0")
    run = OnTerminal(["run", "-n", "3"], project, terminal_env(ralph_env), background)
    try:
        code, output = run.finish()  # nothing is typed: the question goes unanswered
    finally:
        run.close()

    assert code == 2, output
    assert "Wait or exit? (exiting in 0s unless told) [w]ait/[e]xit:" in output
    assert "no answer" in output
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["usageLimit"]["policy"]) == ("usage_limit", "exit")
    assert status["waiting"] is None
    assert not (feature / "logs" / "iteration-2.log").exists()  # nothing ran after the question

    again = ralph(*_then_run(output), "--no-archive")  # the limit has passed: the pasted command goes on
    assert again.returncode == 0, again.stdout + again.stderr
    assert read_json(feature / "status.json")["exitReason"] == "complete"


def test_enter_alone_takes_what_the_question_said(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, tmp_path: Path
) -> None:
    _configure(project, agent_cmd("limit_once.py", str(tmp_path / "marker"), LIMIT))
    enter = OnTerminal(["run", "-n", "3"], project, terminal_env(ralph_env), background)
    try:
        assert wait_until(lambda: "[w]ait/[e]xit:" in enter.text or enter.proc.poll() is not None), enter.text
        enter.type(b"\n")  # no choice: what the question said happens unless told
        code, output = enter.finish()
    finally:
        enter.close()
    assert code == 2, output
    assert "(exiting in 30s unless told)" in output
    assert read_json(feature / "status.json")["usageLimit"]["policy"] == "exit"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("on_no_answer", "later"),
        ("on_no_answer", "0"),
        ("on_no_answer", "ask"),
        ("ask_timeout_seconds", "-1"),
        ("ask_timeout_seconds", "soon"),
        ("ask_timeout_seconds", "true"),
    ],
)
def test_a_bad_usage_limit_setting_is_one_line_naming_the_file_and_key(
    project: Path, feature: Path, ralph, key: str, value: str
) -> None:
    _usage(project, key, value)
    before = snapshot(project)

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"))

    assert_one_line_error(done, ".ralph/config.yaml", f"usage_limit.{key}")
    assert snapshot(project) == before
