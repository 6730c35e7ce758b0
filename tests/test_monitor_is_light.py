"""`ralph monitor` reads the run's files only: it imports neither the engine's values (nor msgspec, which
they are made of) nor the engine, so it starts fast and a change of the engine cannot break it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import RalphRunner

HEAVY = (
    "msgspec",
    "yaml",
    "psutil",
    "ralphloop.engine",
    "ralphloop.events",
    "ralphloop.protocols",
    "ralphloop.config",
    "ralphloop.process",
    "ralphloop.build",
)

PROBE = (
    "import sys\n"
    "from ralphloop.cli.main import main\n"
    "code = main(['monitor', '-f', 'feat'])\n"
    "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)


def test_monitor_imports_no_engine_values(feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    ran = ralph("run", "-n", "1", "--agent-cmd", "true")
    assert ran.returncode == 1, ran.stderr  # one iteration that finishes nothing: max iterations
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=feature.parent.parent,
        env=ralph_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "max_iterations" in done.stdout  # the ended run's summary: the monitor read the files
    loaded = set(done.stderr.split("\n"))
    assert "ralphloop.monitor.snapshot" in loaded
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []
