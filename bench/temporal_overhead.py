"""A parallel run on Temporal against the same run on one machine (issue 37): six stories whose agent works and
commits (2 s each by default), `--parallel 3`, run by the local launcher (`ralph run --parallel 3`) and by the
workflow (`ralph run --parallel 3 --temporal`, one `ralph worker --slots 3` on this machine, Temporal's dev server
on loopback, a bare repository as the remote), side by side, the rounds alternating. What a user pays for
durability is the difference per story: the clone's fetch, the fleet built again for each loop and merge on the
worker, the pushes, the server's round trips.

The worker is started before the timing, as it is on a build box: its own start is not the run's. ralph runs
from the project's environment (the `temporal` extra is not a runtime dependency).

    .venv/bin/python bench/temporal_overhead.py [--sleep S] [--stories N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from _project import ENV, make_project
from _versions import REPO
from parallel import AGENT  # the same agent as bench/parallel.py: it works, marks its story, commits

TEMPORAL = os.path.join(os.path.dirname(sys.executable), "temporal")
RALPH = [sys.executable, "-m", "ralphloop"]


def _port_block() -> int:
    """A port whose next five are free too: the dev server binds its services' own beside the frontend's."""
    for base in range(41000, 60000, 10):
        try:
            for port in range(base, base + 6):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    sys.exit("bench: no free ports")


def _project(stories: int, sleep: float) -> tuple[str, dict[str, str], str]:
    root, env = make_project(stories, ralph=RALPH, env={**ENV, "PYTHONPATH": os.path.join(REPO, "src")})
    env["RALPH_SANDBOX"] = "off"  # the box's cost is bench/sandbox_cost.py's: the same on both sides
    prd_path = os.path.join(root, ".ralph", "feat", "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    prd["branchName"] = "ralph/feat"
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    subprocess.run(["git", "commit", "-qam", "branch"], cwd=root, env=env, check=True)
    subprocess.run(["git", "branch", "ralph/feat"], cwd=root, env=env, check=True)
    agent = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-agent-"), "agent.py")
    with open(agent, "w", encoding="utf-8") as handle:
        handle.write(AGENT)
    return root, env, shlex.join([sys.executable, agent, str(sleep)])


def local(stories: int, sleep: float) -> float:
    root, env, command = _project(stories, sleep)
    started = time.monotonic()
    done = subprocess.run([*RALPH, "run", "--parallel", "3", "--agent-cmd", command], cwd=root, env=env, check=False)
    if done.returncode != 0:
        sys.exit("bench: the local run failed")
    return time.monotonic() - started


def on_temporal(stories: int, sleep: float, address: str, scratch: str) -> float:
    root, env, command = _project(stories, sleep)
    remote = os.path.join(scratch, f"remote-{time.monotonic_ns()}.git")
    subprocess.run(["git", "init", "-q", "--bare", remote], env=env, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=root, env=env, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main", "ralph/feat"], cwd=root, env=env, check=True)
    started = time.monotonic()
    done = subprocess.run(
        [*RALPH, "run", "--parallel", "3", "--temporal", address, "--agent-cmd", command],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"bench: the run on Temporal failed: {done.stdout.decode()}{done.stderr.decode()}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--stories", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    if not os.path.exists(TEMPORAL):
        sys.exit("bench: needs the temporal-test extra (the `temporal` dev server): source scripts/setup.sh")
    scratch = tempfile.mkdtemp(prefix="ralph-bench-temporal-")
    port = _port_block()
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [TEMPORAL, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
         "--http-port", str(port + 10), "--metrics-port", str(port + 11),
         "--db-filename", os.path.join(scratch, "temporal.db"), "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    worker = None
    try:
        for _ in range(200):
            probe = [TEMPORAL, "operator", "namespace", "describe", "-n", "default", "--address", address]
            if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
                break
            time.sleep(0.3)
        env = {**ENV, "PYTHONPATH": os.path.join(REPO, "src"), "RALPH_SANDBOX": "off"}
        worker = subprocess.Popen(
            [*RALPH, "worker", "--temporal", address, "--slots", "3", "--workdir", os.path.join(scratch, "work")],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(2.0)
        here, there = [], []
        for _ in range(options.rounds):
            here.append(local(options.stories, options.sleep))
            there.append(on_temporal(options.stories, options.sleep, address, scratch))
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    mine, theirs = statistics.median(here), statistics.median(there)
    print(f"{options.stories} stories, --parallel 3, agent works {options.sleep:.1f} s each, {options.rounds} rounds")
    print(f"  local launcher:     {mine:6.2f} s   (rounds: {', '.join(f'{value:.2f}' for value in here)})")
    print(f"  Temporal, 1 worker: {theirs:6.2f} s   (rounds: {', '.join(f'{value:.2f}' for value in there)})")
    print(f"  overhead per story: {(theirs - mine) / options.stories * 1000:+.0f} ms")


if __name__ == "__main__":
    main()
