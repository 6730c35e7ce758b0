"""The monitor's loop: notice a change in the state files, read them, draw; exit once the run is over.

Changes are found by polling the files' (mtime, size) every POLL_S: a handful of stat calls, cheap
enough to do ten times a second, so an update shows within about 0.1 s plus the time to draw. The
screen is also redrawn every second for its countdowns. On a terminal the dashboard is a rich Live
view on the alternate screen (left, cursor and all, however the monitor ends); elsewhere it prints
one line per change.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TextIO

from ralphloop.agents.log_tail import own_log
from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive
from ralphloop.files.safe_read import shown_path
from ralphloop.monitor.snapshot import FleetReader, Snapshot, fleet_files, fleet_id, read_snapshot
from ralphloop.monitor.views import WAITING_TEXT, dashboard, end_lines, plain_lines, summary_view
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.fleet import read_fleet_noted
from ralphloop.words.textsafe import strip_terminal_controls

POLL_S = 0.1
REDRAW_S = 1.0  # countdowns and "last output N s ago" move even when no file changes


@dataclass(slots=True)
class Watch:
    """Which run the monitor follows, and when the files it reads last changed."""

    paths: FeaturePaths
    skip: str | None = None  # an ended run (Snapshot.run_id) not to show: wait for the next one instead
    waiting: bool = False  # --wait, or launched beside a run: a run is coming, whatever status.json holds
    skip_fleet: str | None = None  # an ended parallel run (snapshot.fleet_id) not to show, as `skip`
    fleets: FleetReader = read_fleet_noted  # the parallel run's reader: fleet.json, or its workflow on Temporal
    stamps: tuple[object, ...] = ()
    log_file: str = ""
    _files: tuple[str, ...] = field(default=())
    _fleet_files: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        paths = self.paths
        self._files = (paths.status, paths.state, paths.circuit_state, paths.exit_signals, paths.events, paths.lock)
        self._fleet_files = fleet_files(paths, None)

    def changed(self) -> bool:
        stamps = tuple(_stamp(path) for path in (*self._files, self.log_file, *self._fleet_files))
        if stamps == self.stamps:
            return False
        self.stamps = stamps
        return True

    def snapshot(self, now: datetime, height: int = 40) -> Snapshot:
        self._follow_into_the_archive()
        # enough of each to fill the screen; the view decides how many fit under the header (layout.py)
        found = read_snapshot(self.paths, now, events=max(2, height), log_lines=max(2, height), fleets=self.fleets)
        report, fleet = found.report, found.fleet
        self.log_file = own_log(self.paths, report.get("logFile")) if report else ""
        self._fleet_files = fleet_files(self.paths, fleet)
        if fleet is not None and fleet["alive"]:
            self.skip_fleet = None  # a coordinator runs (perhaps adopting the fleet skipped): followed to its end
        elif fleet is not None and fleet_id(fleet) == self.skip_fleet:
            found = replace(found, fleet=None)  # an earlier parallel run's leftovers: wait for the next run
        if report is not None and self.skip is not None and not report["alive"] and found.run_id == self.skip:
            # an earlier run's leftovers: wait for the next one (or show the parallel run going on)
            return Snapshot(now=now, report=None, fleet=found.fleet, fleet_note=found.fleet_note, resume=found.resume)
        if found.damaged and not found.shows_fleet and not self.waiting and lock_holder_alive(self.paths.lock) is None:
            # written atomically, status.json stays damaged until a run rewrites it: nothing to wait for
            shown = shown_path(self.paths.status)
            raise RalphError(
                f"{shown}: not a JSON object (damaged?): no run to follow; {self.paths.command('run')} rewrites it"
            )
        return found

    def _follow_into_the_archive(self) -> None:
        """A run that completes moves its feature into .ralph/archive/ (seed 003): its end is read there."""
        if not self.paths.is_feature_folder or os.path.isdir(self.paths.dir):
            return
        from ralphloop.project.archive import newest_archive  # only once the feature has moved

        moved = newest_archive(self.paths)
        if moved is not None:
            self.paths = FeaturePaths(self.paths.project_root, moved)
            self.__post_init__()


def _stamp(path: str) -> object:
    if not path:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)  # an atomic rewrite is a new inode, whatever the clock says


def follow(
    watch: Watch,
    out: TextIO,
    *,
    terminal: bool,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> int:
    """Show the run until it ends (0) or the user stops the monitor (130)."""
    previous = _stop_on_signals()
    try:
        if terminal:
            return _live(watch, out, now, sleep, monotonic)
        return _plain(watch, out, now, sleep, monotonic)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):  # a closed tmux pane has no terminal left to write to
            out.write("ralph monitor: stopped (the loop, if running, goes on)\n")
            out.flush()
        return 130
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _live(
    watch: Watch,
    out: TextIO,
    now: Callable[[], datetime],
    sleep: Callable[[float], None],
    monotonic: Callable[[], float],
) -> int:
    from rich.console import Console
    from rich.live import Live

    # the screen's own size, always: COLUMNS and LINES left in the environment by a shell or a parent (rich
    # would believe them) described some other terminal, and a full-screen view drawn to them is cut or wraps
    sized_by_terminal = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    console = Console(file=out, highlight=False, _environ=sized_by_terminal)
    snapshot = watch.snapshot(now(), console.height)
    resized, before = _on_resize()
    try:
        # screen=True: the alternate screen, left on exit (normal or not) with the cursor shown again
        with Live(dashboard(snapshot, console.size), console=console, screen=True, auto_refresh=False) as live:
            drawn = monotonic()
            while not snapshot.ended:
                sleep(POLL_S)
                if watch.changed() or resized.pop() or monotonic() - drawn >= REDRAW_S:
                    size = console.size  # asked of the terminal each time: a resized pane is drawn to its new size
                    snapshot = watch.snapshot(now(), size.height)
                    live.update(dashboard(snapshot, size), refresh=True)
                    drawn = monotonic()
    finally:
        if before is not None:
            signal.signal(signal.SIGWINCH, before)
    console.print(summary_view(snapshot))
    return 0


def _plain(
    watch: Watch,
    out: TextIO,
    now: Callable[[], datetime],
    sleep: Callable[[float], None],
    monotonic: Callable[[], float],
) -> int:
    shown: dict[str, str] = {}
    snapshot = watch.snapshot(now())
    read = monotonic()
    while True:
        for key, line in plain_lines(snapshot):
            if shown.get(key) != line:
                stamp = "" if line == WAITING_TEXT else f"[{snapshot.now.astimezone():%H:%M:%S}] "
                out.write(strip_terminal_controls(stamp + line) + "\n")
                shown[key] = line
        out.flush()
        if snapshot.ended:
            break
        sleep(POLL_S)
        # also re-read now and then: the lock's release, which ends the run, changes no file's stamp
        if watch.changed() or monotonic() - read >= REDRAW_S:
            snapshot = watch.snapshot(now())
            read = monotonic()
    out.write(strip_terminal_controls("\n".join(end_lines(snapshot))) + "\n")
    out.flush()
    return 0


class _Flag:
    """Set from a signal handler, read (and cleared) by the loop."""

    def __init__(self) -> None:
        self.raised = False

    def pop(self) -> bool:
        raised, self.raised = self.raised, False
        return raised


def _on_resize() -> tuple[_Flag, Any]:
    """A flag SIGWINCH raises (a resized terminal is redrawn at the next poll, not a second later), and the
    handler it replaced."""
    flag = _Flag()

    def resized(signum: int, frame: object) -> None:
        flag.raised = True

    try:
        return flag, signal.signal(signal.SIGWINCH, resized)
    except ValueError:  # not the main thread: the redraw every second remains
        return flag, None


def _stop_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP (a closed tmux pane) end the monitor like Ctrl+C does, so the screen is restored."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGHUP)}
