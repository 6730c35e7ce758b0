"""`ralph monitor`: how soon a change to the state files reaches the screen (seed: under 2 s; aim 250 ms), what one
dashboard frame costs to draw, and the CPU an idle monitor uses while it polls.

The loop is stood in for by this script: it holds the feature's lock (a real flock, as `ralph run` does) and
rewrites status.json atomically, each time with a new task title. Two monitors run as users run them: the live
dashboard on a terminal (a pty of 120×40, the bytes it draws read here) and the plain one on a pipe (one line per
change). The time from the rename to the new title arriving in the monitor's output is measured.

    .venv/bin/python bench/monitor_latency.py [--changes N]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import psutil
from rich.console import Console

from _project import make_project, run_loop
from ralphloop.files.store import atomic_write_json
from ralphloop.monitor.snapshot import read_snapshot
from ralphloop.monitor.views import dashboard
from ralphloop.project.paths import FeaturePaths

IDLE_S = 5.0


class Output:
    """A monitor's output, read on a thread: when each marker first arrived."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self.read = read
        self.seen = b""
        self.arrivals: dict[int, float] = {}
        self.waiting_for: int | None = None
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = self.read()
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            window = self.seen + data  # a marker may be split across two reads
            self.seen = window[-64:]
            number = self.waiting_for
            if number is not None and number not in self.arrivals and marker(number) in window:
                self.arrivals[number] = now


def marker(number: int) -> bytes:
    return f"S-{number} - change {number}".encode()


def measure(name: str, proc: subprocess.Popen[bytes], output: Output, status: dict[str, object], path: str,
            changes: int) -> None:  # fmt: skip
    time.sleep(1.5)  # started and showing the first state
    latencies = []
    for number in range(1000, 1000 + changes):
        status["currentStory"] = marker(number).decode()
        output.waiting_for = number
        written = time.perf_counter()
        atomic_write_json(path, status)
        while number not in output.arrivals and time.perf_counter() - written < 5:
            time.sleep(0.001)
        latencies.append((output.arrivals.get(number, float("inf")) - written) * 1000)
        time.sleep(0.137)  # not in step with the monitor's polling
    monitor = psutil.Process(proc.pid)
    before = monitor.cpu_times()
    time.sleep(IDLE_S)
    after = monitor.cpu_times()
    idle_cpu = (after.user + after.system - before.user - before.system) / IDLE_S * 100
    rss = monitor.memory_info().rss / 1024 / 1024
    proc.terminate()
    proc.wait(timeout=10)
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(
        f"{name}: change → screen over {changes} changes: median {statistics.median(latencies):.0f} ms, "
        f"p95 {p95:.0f} ms, max {latencies[-1]:.0f} ms (aim ≤ 250 ms; seed < 2000 ms)"
    )
    print(f"{name}: idle, {idle_cpu:.1f}% of one core while it polls, RSS {rss:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    changes = parser.parse_args().changes
    root, env = make_project()
    run_loop(root, env, 1)
    feature = os.path.join(root, ".ralph", "feat")
    status_path = os.path.join(feature, "status.json")
    with open(status_path, encoding="utf-8") as handle:
        status = json.load(handle)
    status.pop("schema_version", None)
    lock = open(os.path.join(feature, ".lock"), "w")  # noqa: SIM115 - held for the whole benchmark
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    fcntl.flock(lock, fcntl.LOCK_EX)
    status.update(status="running", maxIterations=1000)
    atomic_write_json(status_path, status)
    monitor = [sys.executable, "-m", "ralphloop", "monitor", "-f", "feat"]

    # the live dashboard, on a terminal of 120×40
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen_env = {key: value for key, value in env.items() if key not in ("NO_COLOR", "COLUMNS", "LINES")}
    proc = subprocess.Popen(monitor, cwd=root, env={**screen_env, "TERM": "xterm-256color"}, stdin=slave,
                            stdout=slave, stderr=slave, start_new_session=True)  # fmt: skip
    os.close(slave)
    screen = Output(lambda: os.read(master, 65536))
    measure("dashboard on a 120×40 terminal", proc, screen, status, status_path, changes)
    os.close(master)

    # the plain monitor, on a pipe
    piped = subprocess.Popen(monitor, cwd=root, env=env, stdout=subprocess.PIPE)
    stream = piped.stdout
    assert stream is not None
    measure("plain monitor on a pipe", piped, Output(lambda: stream.read1(65536)), status, status_path, changes)

    paths = FeaturePaths(root, feature)
    console = Console(width=120, height=40, file=open(os.devnull, "w"), force_terminal=True)  # noqa: SIM115
    frames = []
    for _ in range(50):
        started = time.perf_counter()
        console.print(dashboard(read_snapshot(paths, datetime.now(UTC), events=40, log_lines=40), (120, 40)))
        frames.append((time.perf_counter() - started) * 1000)
    print(f"one dashboard frame (read the files + draw 120x40): median {statistics.median(frames):.1f} ms")


if __name__ == "__main__":
    main()
