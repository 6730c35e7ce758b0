"""`ralph status --json` and `ralph status` wall time, side by side for a baseline git ref and the working tree.

Target: `ralph status --json` median <= 30 ms on a 2-core machine (issue 19's was 40 ms). Each version runs
against a feature it has run itself (status.json, state.json, progress.txt and logs present); the calls
alternate between versions and between the two commands.

    .venv/bin/python bench/status_latency.py [--runs N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import statistics
import subprocess
import time

from _project import ENV, make_project, run_loop
from _versions import Version, arguments, table, versions

TARGET = "median <= 30 ms"
JSON = ("status", "--json")
# the commands timed, each with its target
COMMANDS = {JSON: TARGET, ("status",): "-"}


def wall_ms(command: list[str], cwd: str, env: dict[str, str]) -> float:
    """One run of `command`, in milliseconds."""
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def measure(
    found: list[Version], runs: int, commands: tuple[tuple[str, ...], ...] = (JSON,)
) -> dict[tuple[str, ...], dict[str, list[float]]]:
    """Each command's times per version over `runs` alternating calls (after 3 to warm up); by default
    `ralph status --json` alone."""
    projects = {}
    for version in found:
        root, env = make_project(ralph=version.ralph(), env=version.env(ENV))
        run_loop(root, env, 2, ralph=version.ralph())
        projects[version.label] = root, env
    times: dict[tuple[str, ...], dict[str, list[float]]] = {
        args: {version.label: [] for version in found} for args in commands
    }
    for number in range(runs + 3):
        for args in commands:
            for version in found:
                root, env = projects[version.label]
                spent = wall_ms([*version.ralph(), *args], root, env)
                if number >= 3:
                    times[args][version.label].append(spent)
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
    found = versions(options.baseline, options.only_current, options.dev_venv)
    times = measure(found, options.runs, tuple(COMMANDS))
    for args, target in COMMANDS.items():
        rows = [(version.label, describe(times[args][version.label])) for version in found]
        table(f"ralph {' '.join(args)} ({options.runs} calls each):", rows, target)
    bare = [wall_ms([found[-1].python, "-c", "pass"], ".", ENV) for _ in range(options.runs)]
    print(f"  bare interpreter start (python -c pass): median {statistics.median(bare):.1f} ms")


if __name__ == "__main__":
    main()
