"""The fuzz trials of the chaos suite at a small count: seeded damage to task, config and state files, then
validate, status, status --json, report and run on them (fuzz.py says what is counted). Every class must
count 0; `bench/chaos.py` runs the same cases by the thousand."""

from __future__ import annotations

from pathlib import Path

from tests.chaos.classes import Findings
from tests.chaos.fuzz import run_fuzz

CASES = 24
SEED = 20


def test_fuzzed_files_find_nothing(tmp_path: Path) -> None:
    findings = Findings()
    run_fuzz(CASES, SEED, tmp_path, findings)
    assert findings.trials["fuzz"] == CASES
    assert findings.failures == 0, findings.table()
