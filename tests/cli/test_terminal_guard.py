"""TerminalGuard gives the terminal back as `ralph run` found it: the modes, the cursor, the normal screen."""

from __future__ import annotations

import os
import pty
import select
import termios
from collections.abc import Iterator

import pytest

from ralphloop.cli.terminal import TerminalGuard


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """A pseudo-terminal (master, slave); not this process's controlling terminal."""
    monkeypatch.setenv("TERM", "xterm-256color")
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    try:
        yield master, slave
    finally:
        os.close(slave)
        os.close(master)


def written(master: int, expected: bytes = b"") -> bytes:
    """What reached the terminal. A pty passes bytes on asynchronously, so when something is expected
    it waits (bounded) until that many bytes have arrived; no timing is asserted."""
    data = b""
    while True:
        ready, _, _ = select.select([master], [], [], 5.0 if len(data) < len(expected) else 0)
        if not ready:
            return data
        try:
            chunk = os.read(master, 4096)
        except (BlockingIOError, OSError):
            return data
        if not chunk:
            return data
        data += chunk


def test_the_modes_come_back_and_the_cursor_is_shown(terminal: tuple[int, int]) -> None:
    master, slave = terminal
    before = termios.tcgetattr(slave)
    with TerminalGuard(slave, slave):
        changed = termios.tcgetattr(slave)
        changed[3] &= ~(termios.ECHO | termios.ICANON)  # what a crashed full-screen program leaves
        termios.tcsetattr(slave, termios.TCSANOW, changed)
    assert termios.tcgetattr(slave) == before
    assert written(master, b"\x1b[?25h") == b"\x1b[?25h"


def test_the_alternate_screen_is_left_only_when_ralph_entered_it(terminal: tuple[int, int]) -> None:
    master, slave = terminal
    with TerminalGuard(slave, slave) as guard:
        guard.alternate_screen = True
    assert written(master, b"\x1b[?1049l\x1b[?25h") == b"\x1b[?1049l\x1b[?25h"


def test_restore_may_run_twice_from_a_signal_handler_and_then_the_exit(terminal: tuple[int, int]) -> None:
    master, slave = terminal
    before = termios.tcgetattr(slave)
    with TerminalGuard(slave, slave) as guard:
        changed = termios.tcgetattr(slave)
        changed[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, changed)
        guard.restore()
        assert termios.tcgetattr(slave) == before
    assert written(master, b"\x1b[?25h\x1b[?25h") == b"\x1b[?25h\x1b[?25h"


def test_nothing_is_written_to_a_pipe_or_a_dumb_terminal(
    terminal: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    master, slave = terminal
    read, write = os.pipe()
    os.set_blocking(read, False)
    try:
        with TerminalGuard(read, write) as guard:
            assert guard.saved is None and not guard.on_terminal
        assert written(read) == b""
    finally:
        os.close(read)
        os.close(write)
    monkeypatch.setenv("TERM", "dumb")
    with TerminalGuard(slave, slave) as guard:
        assert guard.saved is not None  # the modes are still restored
    assert written(master) == b""
