"""`--on-usage-limit ask` on a real terminal (a pty): the question is asked, and "exit" stops with code 2."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, agent_cmd, read_json

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
    assert "resets at 2030-01-01T00:00:00Z" in output
    assert read_json(feature / ".circuit_breaker_state")["consecutive_failures"] == 0
