"""How `ralph run` answers Ctrl+C, SIGTERM and a hang-up, from the moment it holds the run's lock to its last line.

- The first Ctrl+C (or SIGTERM) cancels the run: the agent, or the hook or gate running now, is stopped (its
  process group gets SIGTERM, then SIGKILL after the grace period), the records are saved, exit 130.
- A second one quits at once: every live process group and every process ralph started is killed, status.json
  is marked interrupted (no sink will see the run's end), the terminal is given back, exit 130.
- A hang-up (SIGHUP, or the terminal or pipe ralph writes to gone: outputs.py) cancels like the first Ctrl+C
  but is no Ctrl+C: the next one is still the first. Nobody asked twice, and the records deserve to be saved.

Every message goes through `_say`, which cannot fail: the terminal may be the thing that is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any

from ralphloop.cli import outputs
from ralphloop.cli.terminal import TerminalGuard
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.exitcodes import ExitReason
from ralphloop.processes.local import LIVE_GROUPS, kill_group_now
from ralphloop.records.status import stopped_at_once

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    """The signal handlers and the output watch of one run: `install()` them, `restore()` what was there."""

    def __init__(self, cancel: CancelToken, status_path: str) -> None:
        self.cancel = cancel
        self.status_path = status_path
        self.screen: TerminalGuard | None = None  # the terminal as ralph found it: given back on a quick quit
        self._previous: dict[int, Any] = {}
        self._watch = outputs.OutputWatch()
        self._unlisten: Callable[[], None] | None = None
        self._pressed = False  # a Ctrl+C (or SIGTERM) came: the next one quits at once
        self._wakeup = -1  # the signal wake-up fd before install()

    def install(self, screen: TerminalGuard | None = None) -> None:
        self.screen = screen
        for signum in _SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        self._wakeup = self.cancel.wake_on_signals()
        self._unlisten = outputs.on_lost(self.hang_up)
        self._watch.start()

    def restore(self) -> None:
        """The handlers that were there before; nothing when `install()` was never called."""
        if self._unlisten is None:
            return
        self._watch.stop()
        self._unlisten()
        self._unlisten = None
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._wakeup)

    def _on_signal(self, signum: int, frame: object) -> None:
        if signum == signal.SIGHUP:
            self.hang_up()
        elif self._pressed:  # the second Ctrl+C: no more waiting for anything
            self.quit_now()
        else:
            # Counted apart from the token, which a hang-up also sets: under `ralph run | tee log` a Ctrl+C ends
            # tee too, and the pipe's loss may be noticed before the Ctrl+C itself; that is still one press.
            self._pressed = True
            self.cancel.set()
            _say("\nralph: stopping the agent and saving the records (Ctrl+C again to quit at once)\n")

    def hang_up(self) -> None:
        """Nobody sees the run any more: stop it as the first Ctrl+C does (from a signal handler or any thread)."""
        if not self.cancel.is_set():
            self.cancel.set()
            _say("\nralph: the terminal or the output pipe is gone: stopping the agent and saving the records\n")

    def quit_now(self) -> None:
        """Kill everything ralph started, mark status.json interrupted, give the terminal back, exit 130."""
        # the agent, every hook or gate still running (background hooks have tokens of their own)
        for pgid in {*list(LIVE_GROUPS), *([self.cancel.active_pgid] if self.cancel.active_pgid else [])}:
            kill_group_now(pgid)
        _kill_descendants()  # what has no group of its own: git and the git hooks it runs, say
        with contextlib.suppress(Exception):  # quitting must not wait on, or fail for, a record
            stopped_at_once(self.status_path, SystemClock().now(), "stopped at once (a second Ctrl+C)")
        _say("\nralph: stopped at once\n")
        if self.screen is not None:
            self.screen.restore()  # os._exit skips every `finally`: the terminal's modes and cursor back here
        os._exit(ExitReason.INTERRUPTED.exit_code)


def _say(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, text.encode())


def _kill_descendants() -> None:
    try:
        import psutil

        children = psutil.Process().children(recursive=True)
    except Exception:  # best effort, from a signal handler: the groups are killed already
        return
    for child in children:
        with contextlib.suppress(Exception):
            child.kill()
