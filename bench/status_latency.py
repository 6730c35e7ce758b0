"""`ralph status --json` wall time, side by side for a baseline git ref and the working tree.

Target (issue 19): median <= 40 ms on a 2-core machine. Each version runs against a feature it has run
itself (status.json, state.json, progress.txt and logs present); the calls alternate between versions.

    .venv/bin/python bench/status_latency.py [--runs N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from _project import ENV, make_project, run_loop
from _versions import Version, arguments, table, versions

TARGET = "median <= 40 ms"


def wall_ms(command: list[str], cwd: str, env: dict[str, str]) -> float:
    """One run of `command`, in milliseconds."""
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def measure(found: list[Version], runs: int) -> dict[str, list[float]]:
    """Each version's `ralph status --json` times over `runs` alternating calls (after 3 to warm up)."""
    projects = {}
    for version in found:
        root, env = make_project(ralph=version.ralph(), env=version.env(ENV))
        run_loop(root, env, 2, ralph=version.ralph())
        projects[version.label] = root, env
    times: dict[str, list[float]] = {version.label: [] for version in found}
    for number in range(runs + 3):
        for version in found:
            root, env = projects[version.label]
            spent = wall_ms([*version.ralph(), "status", "--json"], root, env)
            if number >= 3:
                times[version.label].append(spent)
    return times


def describe(times: list[float]) -> list[str]:
    """Median, p90 and min of a list of milliseconds."""
    ordered = sorted(times)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return [f"median {statistics.median(ordered):6.1f} ms", f"p90 {p90:6.1f} ms", f"min {ordered[0]:6.1f} ms"]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40, help="calls per version (default 40)")
    options = parser.parse_args()
    found = versions(options.baseline, options.only_current)
    times = measure(found, options.runs)
    rows = [(version.label, describe(times[version.label])) for version in found]
    table(f"ralph status --json ({options.runs} calls each):", rows, TARGET)
    bare = [wall_ms([sys.executable, "-c", "pass"], ".", ENV) for _ in range(options.runs)]
    print(f"  bare interpreter start (python -c pass): median {statistics.median(bare):.1f} ms")


if __name__ == "__main__":
    main()
