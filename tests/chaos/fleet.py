"""The chaos trial of a parallel run (issue 24): `ralph run --parallel 2` SIGKILLed at a random instant, one to
three times, then run to its end. Its loops must stop with it (the kernel's parent-death signal), the next run
must adopt what it left, and the end must hold every story merged exactly once on the feature branch with its
work, no worktree or loop branch left behind, no process of the trial still running, and every file readable.

The chaos agent appends to work/ledger.txt, so two stories at once conflict there: the merge queue's retry on the
new base is part of every trial."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import time
from pathlib import Path

from tests.chaos import classes as c
from tests.chaos.classes import Findings
from tests.chaos.trial import Case

BRANCH = "feature/feat"  # the template's branchName: not checked out, so the queue moves it itself
KILL_WITHIN_S = 6.0


def fleet_trial(template: Path, into: Path, index: int, rng: random.Random, findings: Findings) -> None:
    case = Case(template, into, f"fleet-{index}", findings)
    findings.trial("fleet:kill")
    agent = case.agent("--fail-once", "0.2", "--daemon", "0.2", "--sleep", "0.3")
    for round_ in range(rng.randint(1, 3)):
        run = case.start("--parallel", "2", "--agent-cmd", agent)
        time.sleep(rng.random() * KILL_WITHIN_S)
        if run.proc.poll() is None:
            run.proc.send_signal(signal.SIGKILL)
        code = run.wait()
        if code is None:
            return _end(case)
        case.survivors()  # the loops and their agents go with their coordinator
        case.check_between(f"after kill round {round_ + 1}")
    final = case.start("--parallel", "2", "--agent-cmd", agent)
    code = final.wait()
    if code is None:
        return _end(case)
    if code != 0:
        text = final.stdout() + final.stderr()
        kind = c.STALE_LOCK if "already running" in text or "another loop" in text else c.LOST_WORK
        findings.add(kind, f"{case.name}: the last run ended {code}:\n{final.tail()}")
    _check_merged_once(case)
    _check_never_redone(case)
    return _end(case)


def _check_never_redone(case: Case) -> None:
    """No agent starts a story after its loop had finished it ("done" in fleet.jsonl) unless the merge queue sent
    it back ("retry") in between: a finished story's work is merged, never done again."""
    journal = case.feature / "fleet.jsonl"
    steps = []
    for line in journal.read_text().splitlines() if journal.exists() else []:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            steps.append((entry.get("mono", 0.0), entry.get("event"), entry.get("story")))
    for event in case.agent_events():
        if event.get("event") != "start" or not isinstance(event.get("mono"), float):
            continue
        story, at = event.get("task"), event["mono"]
        done = [mono for mono, step, who in steps if who == story and step == "done" and mono < at]
        sent_back = [mono for mono, step, who in steps if who == story and step == "retry" and mono < at]
        if done and (not sent_back or max(sent_back) < max(done)):
            why = f"{case.name}: {story}'s agent started again after its loop had finished it"
            case.findings.add(c.DONE_TWICE, why)


def _check_merged_once(case: Case) -> None:
    stories = [f"S-{n}" for n in range(1, 4)]
    subjects = case.git("log", "--format=%s", BRANCH).stdout.splitlines()
    ledger = case.git("show", f"{BRANCH}:work/ledger.txt").stdout.split()
    for story in stories:
        marks = subjects.count(f"{story}: passes (merged by ralph)")
        if marks > 1:
            case.findings.add(c.DONE_TWICE, f"{case.name}: {story} merged {marks} times on {BRANCH}")
        elif marks == 0:
            case.findings.add(c.LOST_WORK, f"{case.name}: {story} never merged on {BRANCH}")
        if case.git("cat-file", "-e", f"{BRANCH}:work/{story}.txt").returncode != 0 or story not in ledger:
            case.findings.add(c.LOST_WORK, f"{case.name}: {story}'s work is not on {BRANCH}")
    worktrees = case.git("worktree", "list", "--porcelain").stdout.count("worktree ")
    loops = case.git("for-each-ref", "--format=%(refname)", "refs/heads/ralph-loops/").stdout.split()
    if worktrees != 1 or loops:
        case.findings.add(c.LEFTOVER, f"{case.name}: {worktrees - 1} worktree(s), loop branches {loops}")


def _end(case: Case) -> None:
    case.survivors()
    case.check_files("at the end")
    case.clean_up()
