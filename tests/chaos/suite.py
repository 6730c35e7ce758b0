"""The chaos suite as one call: templates made once, then trials of every kind, each in its own folder, in
several worker processes; the findings of all of them merged. `bench/chaos.py` runs it at large counts, and
tests/chaos/test_chaos.py at small ones."""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import tempfile
from pathlib import Path

from tests.chaos.classes import Findings
from tests.chaos.fleet import fleet_trial
from tests.chaos.hostile import hostile_trial, two_loops_trial
from tests.chaos.kills import calibrate, kill_trial
from tests.chaos.trial import make_template

KINDS = ("kill", "hostile", "loops", "fleet")


def run_suite(counts: dict[str, int], *, seed: int = 0, jobs: int = 1, workdir: Path | None = None) -> Findings:
    """Run `counts[kind]` trials of each kind (kill, hostile, loops, fleet, fuzz) and return what they found."""
    base = Path(tempfile.mkdtemp(prefix="ralph-chaos-", dir=workdir))
    try:
        work = [(kind, index) for kind in KINDS for index in range(counts.get(kind, 0))]
        random.Random(seed).shuffle(work)  # kinds interleaved: a slow kind does not pile onto one worker
        shares = [work[worker::jobs] for worker in range(jobs)]
        if jobs == 1:
            findings = _worker((base / "w0", shares[0], seed, counts.get("fuzz", 0)))
        else:
            fuzz = [counts.get("fuzz", 0) // jobs + (worker < counts.get("fuzz", 0) % jobs) for worker in range(jobs)]
            tasks = [(base / f"w{worker}", shares[worker], seed + worker, fuzz[worker]) for worker in range(jobs)]
            with multiprocessing.get_context("spawn").Pool(jobs) as pool:
                findings = Findings()
                for part in pool.imap_unordered(_worker, tasks):
                    findings.merge(part)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    if findings.failures or os.environ.get("CHAOS_KEEP"):
        print(f"the trials that found something are kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return findings


def _worker(task: tuple[Path, list[tuple[str, int]], int, int]) -> Findings:
    folder, work, seed, fuzz = task
    folder.mkdir(parents=True)
    findings = Findings()
    kinds = {kind for kind, _ in work}
    templates = {
        "verify": make_template(folder / "template-verify"),
        "trust": make_template(folder / "template-trust", completion="trust"),
    }
    loops = make_template(folder / "template-loops", features=("feat", "tasks")) if "loops" in kinds else None
    calib = calibrate(templates["verify"], folder) if "kill" in kinds else None
    for kind, index in work:
        rng = random.Random(f"{seed}-{kind}-{index}")
        if kind == "kill":
            assert calib is not None
            kill_trial(templates["verify"], folder, index, rng, calib, findings)
        elif kind == "hostile":
            hostile_trial(templates, folder, index, rng, findings)
        elif kind == "fleet":
            fleet_trial(templates["verify"], folder, index, rng, findings)
        else:
            assert loops is not None
            two_loops_trial(loops, folder, index, rng, findings)
    if fuzz:
        from tests.chaos.fuzz import run_fuzz

        run_fuzz(fuzz, seed, folder / "fuzz", findings)
    return findings
