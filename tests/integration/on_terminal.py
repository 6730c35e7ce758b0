"""`ralph ARGS` on a pseudo-terminal that is its controlling terminal, as a user's shell would run it: the
tests type into it (Ctrl+C through the line discipline), read all ralph writes, and can hang it up."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import threading
from pathlib import Path

from tests.conftest import PYTHON
from tests.integration.conftest import Background

COLUMNS = 60
# Runs in the new session (start_new_session): makes the pty on fd 0 its controlling terminal, then
# becomes `python -m ralphloop ...` (same process, same session), so Ctrl+C reaches ralph like a user's.
LAUNCH = (
    "import fcntl, os, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'ralphloop', *sys.argv[1:]])\n"
)


class OnTerminal:
    """`ralph ARGS` with a pty as stdin, stdout, stderr and controlling terminal; a thread reads all it writes."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], background: Background) -> None:
        self.master, slave = pty.openpty()
        self.closed = False
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
        self.slave_name = os.ttyname(slave)
        self.modes = termios.tcgetattr(slave)
        self.proc = subprocess.Popen(
            [PYTHON, "-c", LAUNCH, *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)  # ralph holds the only slave: reading the master ends when ralph is gone
        background.started.append(self.proc)  # type: ignore[arg-type]  # killed on teardown if still running
        self.seen = bytearray()
        self.final_modes: list[object] = []  # the terminal's modes once ralph is gone
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        # Short waits rather than a blocking read: closing the master while another thread is still in read()
        # on it would not take effect (nor hang the terminal up) until that read returned.
        while not self.closed:
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every slave is closed
                return
            if not chunk:
                return
            self.seen += chunk

    @property
    def text(self) -> str:
        return bytes(self.seen).decode("utf-8", "replace")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def current_modes(self) -> list[object]:
        """The terminal's modes (on Linux, the master reports the slave's termios)."""
        return termios.tcgetattr(self.master)

    def mess_up_modes(self) -> None:
        """What a crashed full-screen grandchild leaves behind: no echo, no line editing (Ctrl+C still signals)."""
        fd = os.open(self.slave_name, os.O_RDWR | os.O_NOCTTY)
        try:
            modes = termios.tcgetattr(fd)
            modes[3] &= ~(termios.ECHO | termios.ICANON)
            termios.tcsetattr(fd, termios.TCSANOW, modes)
        finally:
            os.close(fd)
        assert self.current_modes() != self.modes

    def finish(self) -> tuple[int, str]:
        code = self.proc.wait(timeout=60)
        self.reader.join(timeout=30)
        assert not self.reader.is_alive(), "something still holds the terminal"
        self.final_modes = self.current_modes()
        return code, self.text

    def hang_up(self) -> None:
        """What a dropped SSH connection or a killed tmux pane does: the terminal's other side closes. The
        kernel hangs the terminal up: SIGHUP to ralph, and every later write or read of it fails."""
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.reader.join(timeout=30)
            os.close(self.master)


def terminal_env(ralph_env: dict[str, str], *, colour: bool = False) -> dict[str, str]:
    env = {**ralph_env, "TERM": "xterm-256color"}
    if colour:
        env.pop("NO_COLOR", None)
    return env
