"""Start-up of `ralph run`: from starting the command to the first agent call, side by side for a baseline
git ref and the working tree. Target: median <= 120 ms in a small project (issue 19's was 150 ms).

Also shown: the same with 20,000 tracked files (its first workspace capture reads them all, so the
first run is shown apart from the ones after it), `ralph analyze` of a saved iteration log, `ralph --version`
and `ralph --help` (target: median <= 40 ms), whose start-up needs no agent, config or hooks.

The agent is bench/_agent.py's: it notes the moment it starts, on the clock the bench reads.

    .venv/bin/python bench/startup.py [--runs N] [--no-20k] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time

from _agent import StampAgent, build, read_stamps
from _project import ENV, PATIENT_CONFIG, make_project
from _versions import Version, arguments, table, versions

TARGET = "median <= 120 ms"
HELP_TARGET = "median <= 40 ms"


def first_call_ms(version: Version, root: str, env: dict[str, str], agent: StampAgent) -> float:
    """One `ralph run -n 1`: milliseconds from its start to the agent's."""
    stamps = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-stamps-"), "stamps.txt")
    command = [*version.ralph(), "run", "-n", "1", "--no-archive", "--agent-cmd", agent.command(stamps)]
    started = time.monotonic()
    subprocess.run(command, cwd=root, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = read_stamps(stamps)
    os.unlink(stamps)
    if not found:
        raise SystemExit(f"bench: {version.label} made no agent call in {root}")
    return (found[0][0] - started) * 1000


def wall_ms(command: list[str], cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def projects(found: list[Version], files: int) -> dict[str, tuple[str, dict[str, str]]]:
    """A project per version, made by that version's `ralph init`."""
    return {
        version.label: make_project(files=files, ralph=version.ralph(), env=version.env(ENV), config=PATIENT_CONFIG)
        for version in found
    }


def run_startup(found: list[Version], agent: StampAgent, files: int, runs: int) -> dict[str, list[float]]:
    """Each version's start-up times over `runs` alternating runs, the first (cold) run first."""
    made = projects(found, files)
    times: dict[str, list[float]] = {version.label: [] for version in found}
    for _ in range(runs + 1):
        for version in found:
            root, env = made[version.label]
            times[version.label].append(first_call_ms(version, root, env, agent))
    return times


def command_times(found: list[Version], args: list[str], runs: int) -> dict[str, list[float]]:
    """Each version's wall time of `ralph ARGS` in its project, over `runs` alternating runs."""
    made = projects(found, 0)
    times: dict[str, list[float]] = {version.label: [] for version in found}
    for _ in range(runs):
        for version in found:
            root, env = made[version.label]
            times[version.label].append(wall_ms([*version.ralph(), *args], root, env))
    return times


def cells(times: list[float]) -> list[str]:
    ordered = sorted(times)
    return [f"median {statistics.median(ordered):6.1f} ms", f"min {ordered[0]:6.1f} ms", f"max {ordered[-1]:6.1f} ms"]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="runs per version (default 15)")
    parser.add_argument("--no-20k", action="store_true", help="skip the 20,000-file project")
    options = parser.parse_args()
    found = versions(options.baseline, options.only_current, options.dev_venv)
    agent = build()
    small = run_startup(found, agent, 0, options.runs)
    rows = [(version.label, cells(small[version.label][1:])) for version in found]
    table(f"ralph run: start to the first agent call, small project ({options.runs} runs each):", rows, TARGET)
    if not options.no_20k:
        big = run_startup(found, agent, 20_000, options.runs)
        rows = [(v.label, [f"first run {big[v.label][0]:6.1f} ms", *cells(big[v.label][1:])]) for v in found]
        table(f"ralph run: start to the first agent call, 20,000 files ({options.runs} runs each):", rows, "-")
    log = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-log-"), "iteration-1.log")
    with open(log, "w", encoding="utf-8") as handle:
        handle.write("Done with the story.\n<promise>COMPLETE</promise>\n")
    commands = (
        (["analyze", log], "ralph analyze LOG", "-"),
        (["--version"], "ralph --version", "-"),
        (["--help"], "ralph --help", HELP_TARGET),
    )
    for args, title, target in commands:
        times = command_times(found, args, options.runs)
        table(f"{title} ({options.runs} runs each):", [(v.label, cells(times[v.label])) for v in found], target)


if __name__ == "__main__":
    main()
