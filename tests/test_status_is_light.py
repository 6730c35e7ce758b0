"""`ralph status` must stay fast: it imports none of the heavy libraries nor the engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import RalphRunner

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
    "ralphloop.config",
    "ralphloop.protocols",
    "ralphloop.process",
    "importlib.metadata",  # agent plugins: read only when a run names a backend that is not built in
)

PROBE = (
    "import sys\n"
    "from ralphloop.cli.main import main\n"
    "code = main(['status', '--json'])\n"
    "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)


def test_status_imports_nothing_heavy(feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    ran = ralph("run", "-n", "1", "--agent-cmd", "true")
    assert ran.returncode == 1, ran.stderr  # one iteration that finishes nothing: max iterations
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=feature.parent.parent,
        env=ralph_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totalIterations"] == 1
    loaded = set(done.stderr.split("\n"))
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []
