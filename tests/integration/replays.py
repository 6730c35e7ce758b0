"""A replayed agent CLI for the integration tests: tests/agents/replay_NAME.py behind an executable of its own,
named as `NAME.command` in the project's config, and the calls it was given."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, ClassVar

from tests.conftest import AGENTS, PYTHON

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class Replay:
    """A `CLI` executable replaying `runs` (tests/agents/_replay.py), and what it was called with."""

    CLI: ClassVar[str]

    def __init__(self, tmp_path: Path, runs: list[str]) -> None:
        folder = tmp_path / f"{self.CLI}-bin"  # one folder per CLI: a failover test replays two
        folder.mkdir(exist_ok=True)
        self.calls_file = tmp_path / f"{self.CLI}-calls.jsonl"
        plan = folder / "plan.json"
        plan.write_text(json.dumps({"runs": runs, "calls": str(self.calls_file), "counter": str(folder / "count")}))
        self.executable = folder / f"{self.CLI}-replay"
        script = AGENTS / f"replay_{self.CLI}.py"
        self.executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{script}" "{plan}" "$@"\n')
        self.executable.chmod(self.executable.stat().st_mode | stat.S_IXUSR)

    def calls(self) -> list[dict[str, Any]]:
        """Each invocation's {"args", "stdin_bytes", "tz"}, in order ([] before the first)."""
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    def configure(self, project: Path, extra: str = "", backoff: str = "initial_seconds: 0") -> None:
        """The project config: this replay as `CLI.command` (with `extra` lines in that section), no backoff wait
        (tests never sleep)."""
        config = project / ".ralph" / "config.yaml"
        config.write_text(
            config.read_text()
            + f"\n{self.CLI}:\n  command: {json.dumps(str(self.executable))}\n{extra}\nbackoff:\n  {backoff}\n"
        )


def use(project: Path, backend: str, executable: Path | str) -> None:
    """Point `BACKEND.command` at `executable` (a missing one, say) in the project's config; no backoff waits."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text() + f"\n{backend}:\n  command: {json.dumps(str(executable))}\nbackoff:\n  initial_seconds: 0\n"
    )


def metrics(feature: Path) -> list[dict[str, Any]]:
    """The feature's metrics lines."""
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
