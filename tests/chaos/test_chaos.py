"""The chaos suite at CI's counts: every kind of kill and signal, every hostile agent and both ways of running
two loops, at least once each (bench/chaos.py runs the same trials by the thousand). Each class of failure
must count 0; on failure the table and the first examples say what broke, where."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.chaos.chaos_agent import HOSTILE
from tests.chaos.classes import CLASSES, Findings
from tests.chaos.fleet import fleet_trial
from tests.chaos.hostile import LOOPS, hostile_trial, two_loops_trial
from tests.chaos.kills import MODES, Calibration, calibrate, kill_trial
from tests.chaos.trial import make_template


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("chaos-templates")
    return {
        "verify": make_template(base / "verify"),
        "trust": make_template(base / "trust", completion="trust"),
        "loops": make_template(base / "loops", features=("feat", "tasks")),
    }


@pytest.fixture(scope="module")
def calib(templates: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Calibration:
    return calibrate(templates["verify"], tmp_path_factory.mktemp("calibration"))


def _assert_none(findings: Findings) -> None:
    assert set(findings.counts) <= set(CLASSES)
    assert findings.failures == 0, findings.table()


@pytest.mark.parametrize("mode", MODES)
def test_a_kill_or_a_signal_at_a_random_instant_loses_nothing(
    templates: dict[str, Path], calib: Calibration, tmp_path: Path, mode: str
) -> None:
    findings = Findings()
    index = MODES.index(mode)
    kill_trial(templates["verify"], tmp_path, index, random.Random(f"ci-{index}"), calib, findings)
    _assert_none(findings)


@pytest.mark.parametrize("behaviour", HOSTILE)
def test_a_hostile_agent_leaves_nothing_false_and_nothing_lost(
    templates: dict[str, Path], tmp_path: Path, behaviour: str
) -> None:
    findings = Findings()
    index = HOSTILE.index(behaviour)
    hostile_trial(templates, tmp_path, index, random.Random(f"ci-{index}"), findings)
    _assert_none(findings)


@pytest.mark.parametrize("variant", LOOPS)
def test_two_loops_at_once_never_mix_or_lose_work(templates: dict[str, Path], tmp_path: Path, variant: str) -> None:
    findings = Findings()
    index = LOOPS.index(variant)
    two_loops_trial(templates["loops"], tmp_path, index, random.Random(f"ci-{index}"), findings)
    _assert_none(findings)


@pytest.mark.parametrize("index", range(2))
def test_a_parallel_run_killed_at_a_random_instant_merges_every_story_once(
    templates: dict[str, Path], tmp_path: Path, index: int
) -> None:
    findings = Findings()
    fleet_trial(templates["verify"], tmp_path, index, random.Random(f"ci-fleet-{index}"), findings)
    _assert_none(findings)
