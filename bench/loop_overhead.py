"""ralph's own time per iteration: from one agent's exit to the next agent's start (wall time minus the
agent's), side by side for a baseline git ref and the working tree, through the real `ralph run`.

Targets (issue 19): median <= 15 ms in a small repository, <= 60 ms with 20,000 tracked files.

Modes (small, 20k and undo by default, or `--mode NAME`, repeatable):
- small: a project of a few files; an instant agent that changes nothing;
- 20k:   the same with 20,000 tracked files (200 folders);
- undo:  a small project whose agent appends to a file and exits 1: each failed attempt is saved
         (a git ref and a patch) and undone before the retry;
- pass, pass-commit, pass-20k: what users pay (not run by default): the agent edits a tracked file and marks
         a story of prd.json passing every iteration, with git.auto_commit off, on, and in 20,000 files.

Each version runs in its own project (made by its own `ralph init`), with a config that lets an agent
that never progresses (or always fails) go on; the runs alternate between the versions, so a busy
machine slows both alike. The agent is a small C program that notes its start and end (bench/_agent.py).
Wall times suffer on a busy machine; the CPU column (ralph and the git processes it starts, per iteration:
a run's CPU time less that of a one-iteration run, over the iterations) hardly does.

    .venv/bin/python bench/loop_overhead.py [--mode small|20k|undo|pass|pass-commit|pass-20k]
                                            [--iterations N] [--rounds N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
from dataclasses import dataclass

from _agent import StampAgent, build, gaps_ms, read_stamps
from _project import ENV, PATIENT_CONFIG, make_project
from _versions import Version, arguments, table, versions


@dataclass(frozen=True, slots=True)
class Mode:
    """One workload: the project's size and what the agent does."""

    name: str
    title: str
    files: int
    exit_code: int
    touch: str | None
    target: str
    passes: bool = False  # the agent marks a story passing each time (a story done: progress, a counted success)
    commit: bool = False  # git.auto_commit: each accepted iteration committed


# A tracked file of make_project's (files >= 1) that the realistic agent edits, as a real one edits the code.
_SOURCE = "src/pkg0000/mod00000.py"

MODES = {
    "small": Mode("small", "a small project, an instant agent that changes nothing", 0, 0, None, "median <= 15 ms"),
    "20k": Mode(
        "20k", "20,000 tracked files, an instant agent that changes nothing", 20_000, 0, None, "median <= 60 ms"
    ),
    "undo": Mode("undo", "a failing agent whose attempt is saved and undone each time", 0, 1, "attempt.txt", "-"),
    # what users pay: an agent that edits a tracked file and finishes a story every iteration
    "pass": Mode("pass", "an agent that edits a tracked file and passes a story", 1, 0, _SOURCE, "-", passes=True),
    "pass-commit": Mode(
        "pass-commit", "the same, with git.auto_commit on", 1, 0, _SOURCE, "-", passes=True, commit=True
    ),
    "pass-20k": Mode(
        "pass-20k", "the same agent (no commits), 20,000 tracked files", 20_000, 0, _SOURCE, "-", passes=True
    ),
}


@dataclass(frozen=True, slots=True)
class Run:
    """One `ralph run`: ralph's wall time between agent calls (ms), and the CPU time of all it ran (s)."""

    gaps: list[float]
    cpu_s: float


def ralph_run(version: Version, root: str, env: dict[str, str], agent: StampAgent, mode: Mode, calls: int) -> Run:
    """One `ralph run` of `calls` agent calls in `root`."""
    stamps = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-stamps-"), "stamps.txt")
    command = agent.command(stamps, mode.exit_code, mode.touch, passes=mode.passes)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [*version.ralph(), "run", "-n", str(calls), "--no-archive", "--agent-cmd", command],
        cwd=root,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = read_stamps(stamps)
    if len(found) < calls:
        print(f"  ({version.label}: only {len(found)} of {calls} agent calls; see {root})")
    os.unlink(stamps)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(gaps_ms(found), cpu)


def cpu_per_iteration(long: Run, short: Run, iterations: int) -> float:
    """CPU milliseconds per iteration: a long run's CPU time less a one-call run's (start-up and exit)."""
    return (long.cpu_s - short.cpu_s) * 1000 / iterations


def measure(
    mode: Mode, found: list[Version], agent: StampAgent, iterations: int, rounds: int
) -> dict[str, list[float]]:
    """Each version's per-iteration times over `rounds` alternating runs."""
    projects = {
        version.label: make_project(
            rounds * (iterations + 2) + 1 if mode.passes else 3,  # a story for every call, and one left open
            files=mode.files,
            ralph=version.ralph(),
            env=version.env(ENV),
            config=PATIENT_CONFIG + ("git:\n  auto_commit: true\n" if mode.commit else ""),
        )
        for version in found
    }
    times: dict[str, tuple[list[float], list[float]]] = {version.label: ([], []) for version in found}
    for _ in range(rounds):
        for version in found:
            root, env = projects[version.label]
            long = ralph_run(version, root, env, agent, mode, iterations + 1)
            short = ralph_run(version, root, env, agent, mode, 1)
            times[version.label][0].extend(long.gaps)
            times[version.label][1].append(cpu_per_iteration(long, short, iterations))
    return times


def summary(times: list[float]) -> list[str]:
    """Median, p90 and max of a list of milliseconds."""
    ordered = sorted(times)
    if not ordered:
        return ["no iterations"]
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return [f"median {statistics.median(ordered):6.1f} ms", f"p90 {p90:6.1f} ms", f"max {ordered[-1]:6.1f} ms"]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=sorted(MODES), action="append", help="a workload (default: all)")
    parser.add_argument("--iterations", type=int, default=30, help="iterations per run (default 30)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per version, alternating (default 2)")
    options = parser.parse_args()
    found = versions(options.baseline, options.only_current)
    agent = build()
    for name in options.mode or ["small", "20k", "undo"]:
        mode = MODES[name]
        times = measure(mode, found, agent, options.iterations, options.rounds)
        rows = [
            (
                version.label,
                [*summary(times[version.label][0]), f"CPU {statistics.median(times[version.label][1]):5.1f} ms"],
            )
            for version in found
        ]
        count = options.iterations * options.rounds
        table(f"ralph's own time per iteration, {mode.title} ({count} iterations each):", rows, mode.target)


if __name__ == "__main__":
    main()
