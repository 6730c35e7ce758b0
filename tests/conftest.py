"""Shared fixtures: a real git project in a temp folder and a way to run the real `ralph` in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.warm_ralph import WarmRalph

# tests/<package>/ tests src/ralphloop/<package>/, but agents/ holds stand-in agents and plugins/ installed plug-ins:
# the tests of src/ralphloop/agents/ are in tests/backends/, those of src/ralphloop/plugins/ in tests/plugin_tables/.
AGENTS = Path(__file__).parent / "agents"
PYTHON = sys.executable

# No timed tests: Hypothesis's per-example deadline fails a test when a slow disk makes fsync slow.
settings.register_profile("ralph", deadline=None)
settings.load_profile("ralph")


_FIRST = ("tests/e2e/", "tests/chaos/")  # the real agent CLIs and the chaos trials: seconds each


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test under tests/e2e/ is marked `e2e` (`-m "not e2e"` leaves out the real agent CLIs). The slow ones (those,
    the chaos trials, and any marked `slow`) are handed out first, so that each starts while the other workers go
    through the quick ones, not at the end of the run: one 80-second test begun last is 80 seconds of a worker
    alone."""
    root = str(config.rootpath)
    for item in items:
        where = str(item.path).removeprefix(root + "/")
        if where.startswith("tests/e2e/"):
            item.add_marker(pytest.mark.e2e)
        if where.startswith(_FIRST):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow first, else as collected


def agent_cmd(script: str, *args: str) -> str:
    """An --agent-cmd value that runs one of the test agents under tests/agents/ with this Python."""
    import shlex

    return shlex.join([PYTHON, str(AGENTS / script), *args])


def isolated_env(home: Path, gitconfig: Path, *, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """This environment without ralph's and git's variables (nor those starting with `drop`): RALPH_HOME=`home`,
    a fixed git identity, a git config of its own, no colour, this Python's folder first on PATH."""
    # IS_SANDBOX would let Claude Code skip permissions as root: a test that wants it sets it itself.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RALPH_", "GIT_", *drop)) and key not in ("IS_SANDBOX", "COLUMNS", "LINES")
    }  # the size of the terminal pytest runs in is no test's: one that wants a width sets it
    env.update(
        RALPH_HOME=str(home),
        # no sandbox unless a test asks for one (--sandbox bwrap): whether bubblewrap works on this machine is not
        # what the other tests are about, and their agents write beside the project on purpose
        RALPH_SANDBOX="off",
        # a loop that needs a human halts at once, as it did before issue 36, unless a test asks it to wait for
        # `ralph answer` (the default, 8h, would hold every needs-human and blocked test)
        RALPH_QUESTION_WAIT="0",
        NO_COLOR="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(gitconfig),
        PATH=os.path.dirname(PYTHON) + os.pathsep + env.get("PATH", ""),
    )
    return env


@pytest.fixture
def ralph_env(tmp_path: Path) -> dict[str, str]:
    """An environment with a private RALPH_HOME, a fixed git identity, and no colour."""
    return isolated_env(tmp_path / "ralph-home", tmp_path / "gitconfig")


@pytest.fixture
def project(tmp_path: Path, ralph_env: dict[str, str]) -> Path:
    """A git repository with one commit, ready for `ralph init`."""
    root = tmp_path / "project"
    root.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=ralph_env, check=True)
    return root


RalphRunner = Callable[..., subprocess.CompletedProcess[str]]


def _interpreter(env: dict[str, str]) -> dict[str, str]:
    """The variables that shape a Python interpreter as it starts (PYTHONPATH, PYTHONIOENCODING, ...)."""
    return {key: value for key, value in env.items() if key.startswith("PYTHON")}


@pytest.fixture(scope="session")
def warm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WarmRalph]:
    """One warm `ralph` per test worker (tests/warm_ralph.py): each command a process forked from an interpreter
    that has imported ralph already, so that the suite's thousands of commands do not each pay ~150 ms of start-up."""
    base = tmp_path_factory.mktemp("warm")
    server = WarmRalph(isolated_env(base / "home", base / "gitconfig"), tmp_path_factory.mktemp("warm-outputs"))
    yield server
    server.close()


@pytest.fixture
def ralph(
    project: Path, ralph_env: dict[str, str], warm_server: WarmRalph, request: pytest.FixtureRequest
) -> RalphRunner:
    """Run the real `ralph` in the project; returns the completed process. A process forked from the warm server,
    or `python -m ralphloop` started cold for a test marked `cold` or an environment whose PYTHON* variables differ
    from the server's (a PYTHONPATH of plug-ins: a fork cannot change its interpreter)."""
    cold = request.node.get_closest_marker("cold") is not None

    def run(
        *args: str,
        cwd: Path | None = None,
        timeout: float = 120,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        full = {**ralph_env, **(env or {})}
        if not cold and warm_server.interpreter == _interpreter(full):
            return warm_server(cwd or project, full, *args, timeout=timeout, input=input)
        return subprocess.run(
            [PYTHON, "-m", "ralphloop", *args],
            cwd=cwd or project,
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            check=False,
        )

    return run


def write_prd(feature_dir: Path, stories: Sequence[dict[str, Any]] | int, **extra: Any) -> Path:
    """Write a prd.json with the given stories (or N generated ones); returns its path."""
    if isinstance(stories, int):
        stories = [
            {
                "id": f"S-{n}",
                "title": f"Story {n}",
                "acceptanceCriteria": [f"criterion {n}"],
                "priority": n,
                "passes": False,
            }
            for n in range(1, stories + 1)
        ]
    feature_dir.mkdir(parents=True, exist_ok=True)
    body = {
        "feature": feature_dir.name,
        "branchName": f"feature/{feature_dir.name}",
        "description": "test",
        "createdAt": "2026-01-01T00:00:00Z",
        "userStories": list(stories),
        **extra,
    }
    path = feature_dir / "prd.json"
    path.write_text(json.dumps(body, indent=2) + "\n")
    return path


@pytest.fixture
def feature(project: Path, ralph: RalphRunner) -> Path:
    """A feature 'feat' made by the real `ralph init`, with three open stories."""
    done = ralph("init", "feat")
    assert done.returncode == 0, done.stderr
    folder = project / ".ralph" / "feat"
    write_prd(folder, 3)
    return folder


def loaded_modules(
    args: Sequence[str], cwd: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `ralph ARGS` in-process in a fresh interpreter; the finished process and every module it imported."""
    probe = (
        "import sys\n"
        "from ralphloop.cli.main import main\n"
        f"code = main({list(args)!r})\n"
        "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [PYTHON, "-c", probe],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return done, set(done.stderr.split("\n"))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


# The fields the analysis issue names for `ralph analyze --json` (and `.response_analysis`).
ANALYZE_JSON_KEYS = (
    "completion_claimed",
    "exit_signal",
    "status",
    "tasks_completed",
    "files_modified",
    "tests_status",
    "work_type",
    "recommendation",
    "done_ids",
    "failed",
    "learnings",
    "json_status",
    "confidence",
    "asking_questions",
    "signals",
)
