"""What the sandbox costs (issue 35, aim: <= 20 ms per iteration): ralph's own time between two agent calls, and the
start of `ralph run` to the first agent call, with `--sandbox off`, `--sandbox bwrap` with `network: none`, and
with `network: allow` (bubblewrap entered into the run's network by nsenter; ralph's proxy listening there), side
by side in one run, through the real `ralph run`.

The agent is bench/_agent.py's (it edits a tracked file and passes a story each call, as loop_overhead.py's `pass`
mode does); inside the box it may write only the worktree and the git folder, so its stamps go in `.git/`.
Needs a bwrap that works here (scripts/setup.sh installs Debian's bubblewrap when run as root).

    .venv/bin/python bench/sandbox_cost.py [--iterations N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# the bench's temporary folders on the disk, not in /tmp: the box gives the agent a /tmp of its own
os.makedirs("/var/tmp/ralph-bench", exist_ok=True)
tempfile.tempdir = tempfile.mkdtemp(prefix="sandbox-cost-", dir="/var/tmp/ralph-bench")

from _agent import build, gaps_ms, read_stamps  # noqa: E402
from _project import ENV, PATIENT_CONFIG, make_project  # noqa: E402

RALPH = [sys.executable, "-m", "ralphloop"]
ROWS = {
    "--sandbox off": "sandbox:\n  mode: off\n",
    "--sandbox bwrap, network none": "sandbox:\n  mode: bwrap\n  network: none\n",
    "--sandbox bwrap, network allow": "sandbox:\n  mode: bwrap\n  network: allow\n",
}
TOUCH = ("src/module_0.py",)


def one_run(root: str, env: dict[str, str], agent: object, calls: int, number: int) -> tuple[list[float], float]:
    """`ralph run -n calls`: the gaps between its agent calls (ms), and the time from its start to the first call."""
    stamps = os.path.join(root, ".git", f"bench-stamps-{number}.txt")
    command = agent.command(stamps, 0, TOUCH, passes=True)  # type: ignore[attr-defined]
    argv = [*RALPH, "run", "-n", str(calls), "--no-archive", "--agent-cmd", command]
    began = time.monotonic()
    subprocess.run(argv, cwd=root, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = read_stamps(stamps)
    if os.path.exists(stamps):
        os.remove(stamps)
    if len(found) < calls:
        print(f"  (only {len(found)} of {calls} agent calls in {root})")
    first = (found[0][0] - began) * 1000 if found else float("nan")
    return gaps_ms(found), first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        raise SystemExit("bwrap is not installed (apt-get install bubblewrap)")
    agent = build()
    stories = args.rounds * (args.iterations + 2) * 2 + 1
    projects = {
        label: make_project(stories, files=3, ralph=RALPH, env=ENV, config=PATIENT_CONFIG + config)
        for label, config in ROWS.items()
    }
    gaps: dict[str, list[float]] = {label: [] for label in ROWS}
    starts: dict[str, list[float]] = {label: [] for label in ROWS}
    number = 0
    for _ in range(args.rounds):
        for label, (root, env) in projects.items():  # the rows alternate: a busy machine slows each alike
            number += 1
            found, _ = one_run(root, env, agent, args.iterations + 1, number)
            gaps[label] += found
            for _ in range(3):
                number += 1
                starts[label].append(one_run(root, env, agent, 1, number)[1])
    base = statistics.median(gaps["--sandbox off"])
    print(f"ralph's own time per iteration, {args.iterations} iterations x {args.rounds} rounds (medians):")
    for label in ROWS:
        ordered = sorted(gaps[label])
        extra = statistics.median(ordered) - base
        print(
            f"  {label:<34} {statistics.median(ordered):7.1f} ms  p90 {ordered[int(0.9 * (len(ordered) - 1))]:7.1f} ms"
            f"  the sandbox's cost {extra:+6.1f} ms"
        )
    print("`ralph run -n 1` to the agent's first instant (medians):")
    for label in ROWS:
        print(f"  {label:<34} {statistics.median(starts[label]):7.1f} ms")
    for root, _ in projects.values():
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
    shutil.rmtree(tempfile.gettempdir(), ignore_errors=True)


if __name__ == "__main__":
    main()
