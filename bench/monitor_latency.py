"""`ralph monitor`: how soon a change to the state files shows (seed: under 2 s; aim 250 ms), what one
dashboard frame costs to draw, and the CPU an idle monitor uses while it polls.

The loop is stood in for by this script: it holds the feature's lock (a real flock, as `ralph run`
does) and rewrites status.json atomically; the monitor runs as users run it, on a pipe (one line per
change), and the time from the rename to the line arriving is measured.
"""

from __future__ import annotations

import fcntl
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import psutil
from rich.console import Console

from _project import make_project, run_loop
from ralphloop.monitor.snapshot import read_snapshot
from ralphloop.monitor.views import dashboard
from ralphloop.paths import FeaturePaths
from ralphloop.state.store import atomic_write_json

CHANGES = 30


def main() -> None:
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

    proc = subprocess.Popen(
        [sys.executable, "-m", "ralphloop", "monitor", "-f", "feat"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    arrivals: dict[int, float] = {}

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "iteration " in line:
                number = int(line.split("iteration ", 1)[1].split(" ", 1)[0])
                arrivals.setdefault(number, time.perf_counter())

    threading.Thread(target=read, daemon=True).start()
    time.sleep(1.0)  # started and showing the first state
    latencies = []
    for number in range(100, 100 + CHANGES):
        status["iteration"] = number
        written = time.perf_counter()
        atomic_write_json(status_path, status)
        while number not in arrivals and time.perf_counter() - written < 5:
            time.sleep(0.001)
        latencies.append((arrivals.get(number, float("inf")) - written) * 1000)
        time.sleep(0.13)  # not in step with the monitor's polling
    monitor = psutil.Process(proc.pid)
    before = monitor.cpu_times()
    time.sleep(5.0)
    after = monitor.cpu_times()
    idle_cpu = (after.user + after.system - before.user - before.system) / 5.0 * 100
    rss = monitor.memory_info().rss / 1024 / 1024
    proc.terminate()
    proc.wait(timeout=10)

    paths = FeaturePaths(root, feature)
    console = Console(width=100, height=40, file=open(os.devnull, "w"), force_terminal=True)  # noqa: SIM115
    frames = []
    for _ in range(50):
        started = time.perf_counter()
        console.print(dashboard(read_snapshot(paths, datetime.now(UTC))))
        frames.append((time.perf_counter() - started) * 1000)

    latencies.sort()
    print(
        f"ralph monitor, change → line on a pipe over {CHANGES} changes: median {statistics.median(latencies):.0f} ms, "
        f"p90 {latencies[int(0.9 * len(latencies))]:.0f} ms, max {latencies[-1]:.0f} ms "
        "(seed: < 2000 ms; aim 250)"
    )
    print(f"one dashboard frame (read the files + draw 100x40): median {statistics.median(frames):.1f} ms")
    print(f"idle monitor: {idle_cpu:.1f}% of one core while polling, RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
