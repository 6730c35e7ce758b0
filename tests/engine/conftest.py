"""The engine's tests run ralph in this process: its environment the test's, its working folder the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import write_prd
from tests.engine.harness import ralph


@pytest.fixture
def home(project: Path, ralph_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process gets the test environment (a private RALPH_HOME, a fixed git identity) and works in the
    project; `claude` names an executable that exists (the replay runner never starts it), so that the run
    builder's check of the CLI passes as on a machine that has it. Returns RALPH_HOME."""
    for key in list(os.environ):
        if key.startswith(("RALPH_", "GIT_")):
            monkeypatch.delenv(key)
    for key, value in ralph_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("RALPH_CLAUDE_COMMAND", "/bin/true")
    monkeypatch.chdir(project)
    return Path(ralph_env["RALPH_HOME"])


@pytest.fixture
def feature(project: Path, home: Path) -> Path:
    """A feature 'feat' made by `ralph init` (in this process), with three open stories: tests/conftest.py's."""
    done = ralph("init", "feat")
    assert done.code == 0, done.err
    folder = project / ".ralph" / "feat"
    write_prd(folder, 3)
    return folder
