"""`ralph status` must stay fast: it imports none of the heavy libraries nor the engine."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RalphRunner, loaded_modules

HEAVY = (
    "rich",
    "yaml",
    "msgspec",
    "psutil",
    "click",
    "pydantic",
    "jsonschema",
    "typer",
    "dataclasses",
    "ralphloop.engine",
    "ralphloop.config.settings",
    "ralphloop.core.protocols",
    "ralphloop.processes.local",
    "importlib.metadata",  # agent plugins: read only when a run names a backend that is not built in
    "plotly",  # the charts of `ralph report --html` (an optional extra)
    "starlette",  # `ralph serve`'s web stack (an optional extra)
    "uvicorn",
    "anyio",
    "ralphloop.web",
)


def test_status_imports_nothing_heavy(feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    ran = ralph("run", "-n", "1", "--agent-cmd", "true")
    assert ran.returncode == 1, ran.stderr  # one iteration that finishes nothing: max iterations
    done, loaded = loaded_modules(["status", "--json"], feature.parent.parent, ralph_env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totalIterations"] == 1
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []
    # its own parser alone: not the other commands', whose help texts name every backend and format
    assert "ralphloop.plugins.agents" not in loaded
    # and as it is nearly always typed, no parser at all: argparse is a quarter of the command's time
    assert "argparse" not in loaded
    # nor json, re or datetime: with enum, functools and collections, their imports were half of it (json_text.py)
    light = ("json", "re", "enum", "functools", "collections", "datetime", "shlex", "typing", "importlib", "types")
    assert sorted(name for name in loaded if name.split(".")[0] in light) == []


def test_logs_imports_nothing_heavy(feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    """`ralph logs` reads a log through a backend's reader: the reader alone, not the backend."""
    ran = ralph("run", "-n", "1", "--agent-cmd", "echo working")
    assert ran.returncode == 1, ran.stderr
    done, loaded = loaded_modules(["logs", "1"], feature.parent.parent, ralph_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Iteration 1 (command, S-1, ") and "working" in done.stdout
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []


def test_a_run_never_imports_the_web_stack(feature: Path, ralph_env: dict[str, str]) -> None:
    """`ralph serve` reads what a run writes; the run knows nothing of it."""
    done, loaded = loaded_modules(["run", "-n", "1", "--agent-cmd", "true"], feature.parent.parent, ralph_env)
    assert done.returncode == 1, done.stderr  # one iteration that finishes nothing: max iterations
    assert sorted(name for name in loaded if name.startswith(("starlette", "uvicorn", "anyio", "ralphloop.web"))) == []
