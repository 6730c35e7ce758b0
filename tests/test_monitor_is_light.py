"""`ralph monitor` reads the run's files only: it imports neither the engine's values (nor msgspec, which
they are made of) nor the engine, so it starts fast and a change of the engine cannot break it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RalphRunner, loaded_modules

HEAVY = (
    "msgspec",
    "yaml",
    "psutil",
    "ralphloop.engine",
    "ralphloop.core.events",
    "ralphloop.core.protocols",
    "ralphloop.config.settings",
    "ralphloop.processes.local",
    "ralphloop.start.build",
    "plotly",  # the charts of `ralph report --html` (an optional extra)
    "starlette",  # `ralph serve`'s web stack (an optional extra)
    "uvicorn",
    "anyio",
    "ralphloop.web",
)


def test_monitor_imports_no_engine_values(feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    ran = ralph("run", "-n", "1", "--agent-cmd", "true")
    assert ran.returncode == 1, ran.stderr  # one iteration that finishes nothing: max iterations
    done, loaded = loaded_modules(["monitor", "-f", "feat"], feature.parent.parent, ralph_env)
    assert done.returncode == 0, done.stderr
    assert "max_iterations" in done.stdout  # the ended run's summary: the monitor read the files
    assert "ralphloop.monitor.snapshot" in loaded
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []
