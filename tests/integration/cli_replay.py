"""A replayed agent CLI for `ralph run --agent NAME`: tests/agents/replay_cli.py as `NAME.command`, playing whole
runs of tests/fixtures/<folder>/ byte for byte and recording how ralph called it."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from tests.conftest import AGENTS, PYTHON

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class Replay:
    """An executable replaying `runs` (names of tests/fixtures/<folder>/ runs; "work:NAME" finishes the story
    first), and what it was called with."""

    def __init__(self, tmp_path: Path, folder: str, runs: list[str]) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(exist_ok=True)
        self.calls_file = tmp_path / f"{folder}-calls.jsonl"
        plan = bin_dir / f"{folder}-plan.json"
        plan.write_text(
            json.dumps(
                {
                    "fixtures": str(FIXTURES / folder),
                    "runs": runs,
                    "calls": str(self.calls_file),
                    "counter": str(bin_dir / f"{folder}-count"),
                }
            )
        )
        self.executable = bin_dir / f"{folder}-replay"
        self.executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "replay_cli.py"}" "{plan}" "$@"\n')
        self.executable.chmod(self.executable.stat().st_mode | stat.S_IXUSR)

    def calls(self) -> list[dict[str, Any]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]


def use(project: Path, backend: str, executable: Path | str) -> None:
    """Point `BACKEND.command` at `executable` in the project's config; no backoff waits."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text() + f"\n{backend}:\n  command: {json.dumps(str(executable))}\nbackoff:\n  initial_seconds: 0\n"
    )


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
