"""Quality gates (config `quality_checks:`): every gate run in order, and the verdict the loop reads."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from msgspec import Struct

from ralphloop.core.cancel import CancelToken
from ralphloop.core.hook_spec import CommandSpec, safe_name
from ralphloop.core.runner import ProcessLimits
from ralphloop.hooks.run import CommandRun, run_shell
from ralphloop.project.paths import display_path

TAIL_LINES = 20  # of a failing gate's output, in the progress log and the next prompt


def run_gates(
    gates: Sequence[CommandSpec],
    *,
    cwd: str,
    env: Mapping[str, str],
    logs_dir: str,
    iteration: int,
    limits: ProcessLimits,
    cancel: CancelToken,
) -> tuple[CommandRun, ...]:
    """Run every gate in order, failing or not, so the agent hears of every failure; stop only when cancelled."""
    runs: list[CommandRun] = []
    for gate in gates:
        if cancel.is_set():
            break
        log_path = os.path.join(logs_dir, f"gate-{safe_name(gate.name)}-{iteration}.log")
        runs.append(run_shell(gate, cwd=cwd, env=env, log_path=log_path, limits=limits, cancel=cancel))
    return tuple(runs)


class GateVerdict(Struct, frozen=True):
    """The quality gates after one iteration: () failures when none are configured or all pass."""

    runs: tuple[CommandRun, ...] = ()

    @property
    def failures(self) -> tuple[str, ...]:
        """The names of the gates that did not pass, in run order."""
        return tuple(run.name for run in self.runs if not run.ok)

    def summaries(self, root: str) -> list[str]:
        """One line per failing gate: its summary and its log (for progress.txt)."""
        return [
            f"quality gate {run.summary()} (log: {display_path(run.log_path, root)})" for run in self.runs if not run.ok
        ]

    def report(self, root: str) -> list[str]:
        """One note per failing gate: its line, then the last lines of its output (for the agent and the log)."""
        notes = []
        for line, run in zip(self.summaries(root), [run for run in self.runs if not run.ok], strict=True):
            tail = "\n".join(run.tail.splitlines()[-TAIL_LINES:])
            notes.append(line + (f"; the end of its output:\n{tail}" if tail.strip() else ""))
        return notes
