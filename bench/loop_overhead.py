"""ralph's own time per iteration: from one agent's exit to the next agent's start (wall time minus the
agent's), side by side for a baseline git ref and the working tree, through the real `ralph run`.

Modes (`--mode NAME`, repeatable, run in this order; by default all but 20k and undo):
- pass, pass-commit: what users pay: a small project whose agent edits a tracked file and marks a story of
         prd.json passing every iteration, with git.auto_commit off and on;
- undo-third: the undo path: a small project whose agent edits 3 tracked files and passes a story, but every
         third attempt exits 1, to be saved (a git ref and a patch) and undone before the retry;
- small: issue 19's: an instant agent that changes nothing, in a small project;
- pass-20k, pass-20k-commit, 20k: the same in 20,000 tracked files (200 folders), last: the disk writes back
         their projects for a while, and a small project's file creations would wait on it;
- undo:  a small project whose agent appends to a file and fails every time.

Targets (medians): a small project <= 15 ms and <= 2x a shell loop doing the same git work; 20,000 files
<= 60 ms with auto-commit off, <= 0.8x the shell loop with it on; the gap after an undone attempt <= 3x pass's
(shown when pass ran in the same invocation); small and 20k keep issue 19's, <= 15 ms and <= 60 ms. The shell
loop, measured in the same run in its own copy of the project, is what snarktank/ralph's loop does between two
agent calls: the same agent, then `git status --porcelain`, `git add -A` and, when there is a change,
`git commit`; each version's row shows its ratio to it.

Each version runs in its own project (made by its own `ralph init`), with a config that lets an agent
that never progresses (or always fails) go on; the runs alternate between the versions, so a busy
machine slows both alike. The agent is a small C program that notes its start and end (bench/_agent.py).
Wall times suffer on a busy machine; the CPU column (ralph and the git processes it starts, per iteration:
a run's CPU time less that of a one-iteration run, over the iterations) hardly does.

    .venv/bin/python bench/loop_overhead.py [--mode pass|pass-commit|pass-20k|pass-20k-commit|undo-third|small|20k|undo]
                                            [--iterations N] [--rounds N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

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
    touch: tuple[str, ...]  # tracked files the agent appends a line to, as a real one edits the code
    target: str
    passes: bool = False  # the agent marks a story passing each time (a story done: progress, a counted success)
    commit: bool = False  # git.auto_commit: each accepted iteration committed
    shell: bool = False  # a shell loop doing the same git work is measured beside ralph, in the same run
    fail_every: int = 0  # only every Nth call exits exit_code (and passes no story); 0: every call does
    against: str = "pass"  # the mode whose median the gaps after a failed attempt are set against


# Tracked files of make_project's (files >= 3) that the realistic agents edit.
_ONE = ("src/pkg0000/mod00000.py",)
_THREE = (*_ONE, "src/pkg0000/sub/mod00001.py", "src/pkg0000/mod00002.py")
_SMALL = "median <= 15 ms and <= 2x the shell loop"
_BIG, _BIG_COMMIT = "median <= 60 ms", "median <= 0.8x the shell loop"
_UNDO = "median after an undone attempt <= 3x the plain path's (after a pass, in the same runs)"

MODES = {
    # what users pay: an agent that edits a tracked file and finishes a story every iteration
    "pass": Mode("pass", "an agent that edits a tracked file and passes a story", 1, 0, _ONE, _SMALL, True, shell=True),
    "pass-commit": Mode("pass-commit", "the same, git.auto_commit on", 1, 0, _ONE, _SMALL, True, True, shell=True),
    # the undo path: 3 files edited, every third attempt fails (saved and undone), the others pass a story
    "undo-third": Mode(
        "undo-third", "3 files edited, every third attempt failed and undone", 3, 1, _THREE, _UNDO, True, fail_every=3
    ),
    # issue 19's: an agent that changes nothing, and one that always fails
    "small": Mode("small", "a small project, an instant agent that changes nothing", 0, 0, (), "median <= 15 ms"),
    # the big project last: 20,000 files written back to the disk slow down every file a small project's run creates
    "pass-20k": Mode("pass-20k", "the same, 20,000 tracked files", 20_000, 0, _ONE, _BIG, True, shell=True),
    "pass-20k-commit": Mode(
        "pass-20k-commit", "the same, 20,000 files, git.auto_commit on", 20_000, 0, _ONE, _BIG_COMMIT, True, True, True
    ),
    "20k": Mode("20k", "20,000 tracked files, an instant agent that changes nothing", 20_000, 0, (), "median <= 60 ms"),
    "undo": Mode("undo", "a failing agent whose attempt is saved and undone each time", 0, 1, ("attempt.txt",), "-"),
}
DEFAULT = ("pass", "pass-commit", "undo-third", "small", "pass-20k", "pass-20k-commit")
SHELL = "shell loop (git status, add -A, commit)"


@dataclass(frozen=True, slots=True)
class Run:
    """One `ralph run` (or shell loop): the wall time between agent calls (ms), the CPU time of all it ran (s),
    and whether it made every agent call asked for."""

    gaps: list[float]
    cpu_s: float
    complete: bool


@dataclass(slots=True)
class Times:
    """One row of a table over all its runs: ms between agent calls, CPU ms per iteration, and the gaps that
    followed a failed attempt (the undo path)."""

    gaps: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    undone: list[float] = field(default_factory=list)
    passed: list[float] = field(default_factory=list)  # with fail_every: the gaps after a passing attempt


def timed_run(argv: list[str], root: str, env: dict[str, str], stamps: str, calls: int, label: str) -> Run:
    """Run `argv` (whose agent records into `stamps`) in `root`: the gaps between its agent calls and the CPU
    time of all it ran, read from this process's children's usage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=root, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = read_stamps(stamps)
    shutil.rmtree(os.path.dirname(stamps), ignore_errors=True)
    if len(found) < calls:
        print(f"  ({label}: only {len(found)} of {calls} agent calls; see {root})")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(gaps_ms(found), cpu, len(found) >= calls)


def stamps_path() -> str:
    """A fresh file for one run's agent stamps (its folder is removed once they are read)."""
    return os.path.join(tempfile.mkdtemp(prefix="ralph-bench-stamps-"), "stamps.txt")


def agent_command(agent: StampAgent, stamps: str, mode: Mode) -> str:
    """The agent of `mode`, recording into `stamps`."""
    return agent.command(stamps, mode.exit_code, mode.touch, passes=mode.passes, fail_every=mode.fail_every)


def ralph_run(version: Version, root: str, env: dict[str, str], agent: StampAgent, mode: Mode, calls: int) -> Run:
    """One `ralph run` of `calls` agent calls in `root`."""
    stamps = stamps_path()
    command = agent_command(agent, stamps, mode)
    argv = [*version.ralph(), "run", "-n", str(calls), "--no-archive", "--agent-cmd", command]
    return timed_run(argv, root, env, stamps, calls, version.label)


def shell_loop(command: str, calls: int) -> str:
    """snarktank/ralph's loop in bash: the agent with the prompt on its input, then the git work a loop does
    between two agent calls (status, add -A, a commit when something changed)."""
    return (
        f"for i in $(seq {calls}); do\n"
        f"  {command} < .ralph/feat/prompt.md\n"
        "  changes=$(git status --porcelain)\n"
        "  git add -A\n"
        '  if [ -n "$changes" ]; then git commit -q -m "iteration $i"; fi\n'
        "done\n"
    )


def shell_run(root: str, env: dict[str, str], agent: StampAgent, mode: Mode, calls: int) -> Run:
    """One shell loop of `calls` agent calls in `root`: the reference ralph's gap is set against."""
    stamps = stamps_path()
    script = shell_loop(agent_command(agent, stamps, mode), calls)
    return timed_run(["bash", "-c", script], root, env, stamps, calls, "shell loop")


def cpu_per_iteration(long: Run, short: Run, iterations: int) -> float:
    """CPU milliseconds per iteration: a long run's CPU time less a one-call run's (start-up and exit)."""
    return (long.cpu_s - short.cpu_s) * 1000 / iterations


def after_failures(gaps: list[float], mode: Mode) -> list[float]:
    """The gaps that followed a failed attempt: the agent fails every `fail_every`th call of a run."""
    if not mode.fail_every:
        return []
    return [gap for call, gap in enumerate(gaps, 1) if call % mode.fail_every == 0]


def after_passes(gaps: list[float], mode: Mode) -> list[float]:
    """The gaps that followed a passing attempt in a run whose agent fails every `fail_every`th call: the plain
    path of the same agent, measured in the same minutes (this machine's speed drifts by half from one minute to
    the next, so a ratio to another mode's run says as much about the drift as about ralph)."""
    if not mode.fail_every:
        return []
    return [gap for call, gap in enumerate(gaps, 1) if call % mode.fail_every != 0]


@dataclass(frozen=True, slots=True)
class Row:
    """A row of a table: the project it runs in and a run of N agent calls there."""

    root: str
    run: Callable[[int], Run]


def rows_of(mode: Mode, found: list[Version], agent: StampAgent, stories: int) -> dict[str, Row]:
    """A run of N agent calls for each row of the table: each version in its own project (made by its own
    `ralph init`) and, with `mode.shell`, the shell loop in a copy of the same layout."""
    config = PATIENT_CONFIG + ("git:\n  auto_commit: true\n" if mode.commit else "")
    made: dict[str, Row] = {}
    for version in found:
        root, env = make_project(stories, files=mode.files, ralph=version.ralph(), env=version.env(ENV), config=config)
        made[version.label] = Row(root, partial(ralph_run, version, root, env, agent, mode))
    if mode.shell:
        root, env = make_project(stories, files=mode.files, ralph=found[-1].ralph(), env=found[-1].env(ENV))
        env = {**env, "RALPH_FEATURE_DIR": os.path.join(root, ".ralph", "feat")}  # as ralph tells its agent
        made[SHELL] = Row(root, partial(shell_run, root, env, agent, mode))
    return made


def measure(mode: Mode, found: list[Version], agent: StampAgent, iterations: int, rounds: int) -> dict[str, Times]:
    """Each row's per-iteration times over `rounds` alternating runs (the versions', then the shell loop's);
    the projects are removed afterwards unless a run fell short (its folder is named then)."""
    stories = rounds * (iterations + 2) + 1 if mode.passes else 3  # a story for every call, and one left open
    made = rows_of(mode, found, agent, stories)
    times = {label: Times() for label in made}
    complete = True
    for _ in range(rounds):
        for label, row in made.items():
            long = row.run(iterations + 1)
            short = row.run(1)
            times[label].gaps.extend(long.gaps)
            times[label].cpu.append(cpu_per_iteration(long, short, iterations))
            times[label].undone.extend(after_failures(long.gaps, mode))
            times[label].passed.extend(after_passes(long.gaps, mode))
            complete = complete and long.complete and short.complete
    if complete:
        for row in made.values():
            shutil.rmtree(os.path.dirname(row.root), ignore_errors=True)  # make_project's folder: project and home
    return times


def summary(times: list[float]) -> list[str]:
    """Median, p90 and max of a list of milliseconds."""
    ordered = sorted(times)
    if not ordered:
        return ["no iterations"]
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return [f"median {statistics.median(ordered):6.1f} ms", f"p90 {p90:6.1f} ms", f"max {ordered[-1]:6.1f} ms"]


def median(times: list[float]) -> float | None:
    """The median, or None for no times."""
    return statistics.median(times) if times else None


def cells(mode: Mode, label: str, times: dict[str, Times], plain: dict[str, float]) -> list[str]:
    """One row: its gaps and CPU, then for a version the ratio to the shell loop of the same run and, after a
    failed attempt, the gaps' median and its ratio to the plain mode's (`plain`: label -> median)."""
    mine = times[label]
    row = [*summary(mine.gaps), f"CPU {statistics.median(mine.cpu):5.1f} ms"]
    gap = median(mine.gaps)
    shell = median(times[SHELL].gaps) if SHELL in times else None
    if label != SHELL and gap is not None and shell:
        row.append(f"{gap / shell:4.2f}x shell")
    undone = median(mine.undone)
    if undone is not None:
        row.append(f"after an undo {undone:6.1f} ms")
        passed = median(mine.passed)
        if passed:
            row.append(f"{undone / passed:4.2f}x after a pass")
        if plain.get(label):
            row.append(f"{undone / plain[label]:4.2f}x {mode.against}")
    return row


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--mode", choices=list(MODES), action="append", help="a workload (default: " + ", ".join(DEFAULT) + ")"
    )
    parser.add_argument("--iterations", type=int, default=30, help="iterations per run (default 30)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per version, alternating (default 2)")
    options = parser.parse_args()
    found = versions(options.baseline, options.only_current, options.dev_venv)
    agent = build()
    chosen = options.mode or DEFAULT
    medians: dict[str, dict[str, float]] = {}  # mode -> label -> median gap, for a later mode's ratio
    for name in (name for name in MODES if name in chosen):  # pass before undo-third, which is set against it
        mode = MODES[name]
        # The last mode's projects (20,000 files each) are still being written back to the disk: a file created
        # meanwhile (a state file, a loose object) waits on the journal, and the next mode would pay for it.
        os.sync()
        times = measure(mode, found, agent, options.iterations, options.rounds)
        medians[name] = {label: gap for label, row in times.items() if (gap := median(row.gaps)) is not None}
        plain = medians.get(mode.against, {}) if mode.fail_every else {}
        rows = [(label, cells(mode, label, times, plain)) for label in times]
        count = options.iterations * options.rounds
        table(f"ralph's own time per iteration, {mode.title} ({count} iterations each):", rows, mode.target)


if __name__ == "__main__":
    main()
