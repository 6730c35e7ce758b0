"""fleet/launcher.LocalProcessLauncher's warm processes, real ones: a loop handed to one runs as `ralph` would;
the one taken is replaced a moment later, not while the loops just started need the cores; none outlives close."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ralphloop import __version__
from ralphloop.fleet import launcher
from ralphloop.fleet.launcher import LocalProcessLauncher, LoopSpec


def _spec(tmp_path: Path, name: str) -> LoopSpec:
    return LoopSpec(story=name, worktree=str(tmp_path), argv=("--version",), env={}, slot=1, log=str(tmp_path / name))


def _wait(condition: object, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.02)
    return False


def test_a_warm_process_taken_is_replaced_a_moment_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "REFILL_AFTER_S", 0.5)
    pool = LocalProcessLauncher(warm=1)
    try:
        (first,) = pool.ready
        handle = pool.start(_spec(tmp_path, "a"))
        taken = time.monotonic()
        assert handle.pid == first.pid and pool.ready == []  # not replaced at once
        assert _wait(lambda: handle.poll() is not None) and handle.poll() == 0
        assert __version__ in (tmp_path / "a").read_text()
        assert _wait(lambda: len(pool.ready) == 1)
        assert time.monotonic() - taken >= 0.45
        again = pool.start(_spec(tmp_path, "b"))
        assert _wait(lambda: again.poll() is not None) and again.poll() == 0
    finally:
        pool.close()
    assert pool.ready == []


def test_no_warm_process_outlives_close_even_with_a_refill_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "REFILL_AFTER_S", 0.3)
    pool = LocalProcessLauncher(warm=2)
    kept = list(pool.ready)
    handle = pool.start(_spec(tmp_path, "a"))
    pool.close()  # before the refill's moment
    time.sleep(0.6)
    assert pool.ready == []
    assert all(process.poll() is not None for process in kept if process.pid != handle.pid)
    assert _wait(lambda: handle.poll() is not None)
