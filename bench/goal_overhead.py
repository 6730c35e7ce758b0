"""Goal mode's cost per iteration (ralph's own time: from one agent's exit to the next one's start), side by
side for a baseline git ref and the working tree, over 30 iterations of an instant agent that completes the
step it is given and adds one each time:

- a fresh goal workspace;
- the same with a sequential hook (`true`), a background one and a quality gate (`true`) each iteration;
- a PROGRESS.yaml that already holds 500 steps and 1,000 hook-task records (read and written every iteration).

Drives the real `ralph run` with bench/_agent.py's agent in goal mode; each version in its own project.

    .venv/bin/python bench/goal_overhead.py [--iterations N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile

from _agent import StampAgent, build, gaps_ms, read_stamps
from _project import ENV, PATIENT_CONFIG, make_project
from _versions import Version, arguments, table, versions

HOOKS = (
    "per-iteration-hooks:\n"
    "  - {id: seq, command: 'true', parallel: false}\n"
    "  - {id: bg, command: 'echo $ITERATION > /dev/null', parallel: true}\n"
)
GATE = "quality_checks:\n  gate: 'true'\n"
STAMP = "2026-11-21T00:00:00Z"


def big_progress() -> str:
    """A PROGRESS.yaml of 500 completed steps and 1,000 hook-task records, in the format ralph writes."""
    steps = "".join(
        f'- id: step-{n}\n  prompt: "{f"step {n} " * 10}"\n  status: completed\n  added-at: "{STAMP}"\n'
        f'  added-in-iteration: {n}\n  completed-at: "{STAMP}"\n'
        for n in range(500)
    )
    tasks = "".join(
        f'- iteration: {n // 2}\n  hook-id: hook-{n % 2}\n  status: completed\n  spawned-at: "{STAMP}"\n'
        f'  completed-at: "{STAMP}"\n  exit-code: 0\n'
        for n in range(1000)
    )
    return (
        "sprint-id: bench\nstatus: in-progress\nmode: ralph\ngoal: |\n  Benchmark the loop.\n"
        "ralph:\n  idle-threshold: 3\n  min-iterations: 0\nper-iteration-hooks: []\n"
        f"dynamic-steps:\n{steps}hook-tasks:\n{tasks}"
        "ralph-exit:\n  detected-at: null\n  iteration: null\n  final-summary: null\n"
        f'stats:\n  started-at: "{STAMP}"\n  current-iteration: 500\n  max-iterations: null\n  idle-iterations: 0\n'
    )


def goal_project(version: Version, *, hooks: bool, big: bool) -> tuple[str, dict[str, str]]:
    """A project with the goal workspace `.ralph/bench/`, made by `version`."""
    root, env = make_project(
        ralph=version.ralph(), env=version.env(ENV), config=PATIENT_CONFIG + (GATE if hooks else "")
    )
    folder = os.path.join(root, ".ralph", "bench")
    os.makedirs(folder)
    with open(os.path.join(folder, "SPRINT.yaml"), "w", encoding="utf-8") as handle:
        handle.write("workflow: ralph\ngoal: |\n  Benchmark the loop.\n" + (HOOKS if hooks else ""))
    if big:
        with open(os.path.join(folder, "PROGRESS.yaml"), "w", encoding="utf-8") as handle:
            handle.write(big_progress())
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "goal"], cwd=root, env=env, check=True)
    return root, env


def measure(
    found: list[Version], agent: StampAgent, iterations: int, *, hooks: bool, big: bool
) -> dict[str, list[float]]:
    """Each version's per-iteration times (ms), one run each."""
    times = {}
    for version in found:
        root, env = goal_project(version, hooks=hooks, big=big)
        stamps = os.path.join(tempfile.mkdtemp(prefix="ralph-bench-stamps-"), "stamps.txt")
        command = [*version.ralph(), "run", "bench", "-n", str(iterations + 1), "--no-archive"]
        command += ["--agent-cmd", agent.command(stamps, goal=True)]
        subprocess.run(command, cwd=root, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found_stamps = read_stamps(stamps)
        if len(found_stamps) < iterations + 1:
            print(f"  ({version.label}: only {len(found_stamps)} of {iterations + 1} agent calls; see {root})")
        times[version.label] = gaps_ms(found_stamps)
    return times


def cells(times: list[float]) -> list[str]:
    ordered = sorted(times)
    if not ordered:
        return ["no iterations"]
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return [f"median {statistics.median(ordered):6.1f} ms", f"p90 {p90:6.1f} ms", f"max {ordered[-1]:6.1f} ms"]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=30, help="iterations per run (default 30)")
    options = parser.parse_args()
    found = versions(options.baseline, options.only_current, options.dev_venv)
    agent = build()
    for title, hooks, big in (
        ("a fresh goal workspace", False, False),
        ("with a sequential hook, a background hook and a quality gate", True, False),
        ("over 500 steps and 1,000 hook records in PROGRESS.yaml", False, True),
    ):
        times = measure(found, agent, options.iterations, hooks=hooks, big=big)
        table(
            f"goal mode, ralph's own time per iteration, {title}:",
            [(v.label, cells(times[v.label])) for v in found],
            "-",
        )


if __name__ == "__main__":
    main()
