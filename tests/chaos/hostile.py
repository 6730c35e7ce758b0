"""Hostile-agent trials and two loops at once.

A hostile trial runs one honest iteration (so there is ralph's work to attack), then one to three iterations of
a hostile agent (chaos_agent.py --hostile: it lies, floods, daemonises, hangs, rewrites git history, leaves a
merge, garbles ralph's records, kills ralph ...), in `completion: verify` or `trust` mode, then the honest agent
until the run ends. A hostile run may end any way but falsely: exit 0 means every story passes with its work
in HEAD (trust mode excepted for a bare promise, which it takes at its word by definition). The last run must
then complete with every truth of trial.py.

A two-loop trial starts two features' loops at once: in one worktree (the second must be refused, naming the
holder, and then completes on its own) or in two worktrees of one repository (both complete, side by side).
Either way no commit mixes the two features' work, and each feature ends complete.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from tests.chaos import classes as c
from tests.chaos.chaos_agent import HOSTILE
from tests.chaos.classes import Findings
from tests.chaos.trial import Case

LOOPS = ("same-worktree", "two-worktrees")


def hostile_trial(templates: dict[str, Path], into: Path, index: int, rng: random.Random, findings: Findings) -> None:
    behaviour = HOSTILE[index % len(HOSTILE)]
    completion = "trust" if rng.random() < 0.5 and behaviour != "lie" else "verify"
    case = Case(templates[completion], into, f"hostile-{index}-{behaviour}-{completion}", findings)
    findings.trial(f"hostile:{behaviour}")
    honest = case.agent()
    first = case.start("--no-archive", "-n", "1", "--agent-cmd", honest)
    if first.wait() is None:
        return _end(case)
    hostile = case.agent("--hostile", behaviour)
    rounds = rng.randint(1, 3)
    run = case.start("--no-archive", "-n", str(rounds), "-t", "3s", "-v", "--agent-cmd", hostile)
    code = run.wait()
    if code is None:
        return _end(case)
    if code == 0 and not (completion == "trust" and behaviour in ("lie", "quoted-promise", "mark-all")):
        case.check_claim(f"after {behaviour}")
    if code == 0 and completion == "trust" and behaviour == "quoted-promise" and not all(case.stories().values()):
        findings.add(c.FALSE_COMPLETION, f"{case.name}: a quoted promise ended a trust-mode run:\n{run.tail()}")
    case.check_between(f"after {behaviour}")
    final = case.start("--no-archive", "--agent-cmd", honest)
    code = final.wait()
    if code is None:
        return _end(case)
    if code != 0:
        findings.add(c.LOST_WORK, f"{case.name}: the honest run after {behaviour} ended {code}:\n{final.tail()}")
    else:
        case.check_claim("the last run")
    return _end(case, one_commit=False)


def two_loops_trial(template: Path, into: Path, index: int, rng: random.Random, findings: Findings) -> None:
    variant = LOOPS[index % len(LOOPS)]
    case = Case(template, into, f"loops-{index}-{variant}", findings)
    findings.trial(f"two-loops:{variant}")
    a = case
    if variant == "same-worktree":
        b = case.beside("tasks")
    else:
        other = case.base / "project-tasks"
        case.git("worktree", "add", "-q", "-b", "tasks-branch", str(other))
        b = case.beside("tasks", other)
    agent = case.agent("--fail-once", "0.3", "--sleep", "0.05")
    first = a.start("--no-archive", "-f", "feat", "--agent-cmd", agent)
    time.sleep(rng.random() * 0.5)
    second = b.start("--no-archive", "-f", "tasks", "--agent-cmd", agent, cwd=b.project)
    codes = (first.wait(), second.wait())
    if None in codes:
        return _end(case, b)
    if variant == "same-worktree":
        refused = [run for run, code in zip((first, second), codes, strict=True) if code != 0]
        for run in refused:
            if "another loop runs in this worktree" not in run.stderr():
                findings.add(c.LOST_WORK, f"{case.name}: a loop ended {run.proc.returncode}:\n{run.tail()}")
        for view, run in ((a, first), (b, second)):
            if run in refused:  # what the refusal said to do: run it once the other is done
                again = view.start("--no-archive", "-f", view.feature.name, "--agent-cmd", agent, cwd=view.project)
                code = again.wait()
                if code is None:
                    return _end(case, b)
                if code != 0:
                    findings.add(c.LOST_WORK, f"{view.name}: the run after the refusal ended {code}:\n{again.tail()}")
    else:
        for view, run, code in ((a, first, codes[0]), (b, second, codes[1])):
            if code != 0:
                findings.add(c.LOST_WORK, f"{view.name}: a loop in its own worktree ended {code}:\n{run.tail()}")
    for view in (a, b):
        view.check_claim("two loops")
    _mixed(case, a, b)
    return _end(case, b, alone=variant == "same-worktree")


def _mixed(case: Case, a: Case, b: Case) -> None:
    """No commit holds both features' work: one loop never commits the other's files."""
    for view in {id(a.project): a, id(b.project): b}.values():
        log = view.git("log", "--format=@%h %s", "--name-only").stdout
        for commit in log.split("@")[1:]:
            head, *files = commit.strip().splitlines()
            owners = {path.split("/")[1][0] for path in files if path.startswith("work/") and "-" in path}
            if len(owners) > 1:
                case.findings.add(c.LOST_WORK, f"{case.name}: a commit mixes two loops' work: {head} {files}")


def _end(case: Case, *others: Case, one_commit: bool = True, alone: bool = True) -> None:
    case.survivors()
    for view in (case, *others):
        view.check_end(one_commit=one_commit, alone=alone)
    case.clean_up()
