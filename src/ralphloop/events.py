"""What the engine tells the world. It never prints; the CLI, logs and monitor subscribe to these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ralphloop.exitcodes import ExitReason
from ralphloop.protocols import AgentResult


@dataclass(frozen=True, slots=True)
class RunStarted:
    feature: str
    feature_dir: str
    source_kind: str
    agent: str
    max_iterations: int | None
    timeout_s: float
    done: int
    total: int
    metrics_file: str = ""  # where ralph_metrics.jsonl is, as shown to the user


@dataclass(frozen=True, slots=True)
class IterationStarted:
    iteration: int  # within this run: 1, 2, ...
    number: int  # across every run of the feature; names the log file
    max_iterations: int | None
    task_id: str
    task_title: str
    log_path: str


@dataclass(frozen=True, slots=True)
class AgentOutput:
    stream: str  # "stdout" or "stderr"
    data: bytes


@dataclass(frozen=True, slots=True)
class AgentActivity:
    """What the agent is doing now, when its output says (a tool use, an API retry)."""

    text: str


@dataclass(frozen=True, slots=True)
class IterationFinished:
    iteration: int
    number: int
    task_id: str
    status: str  # complete | in-progress | failed | blocked | interrupted
    result: AgentResult
    files_changed: tuple[str, ...]
    commit: str | None
    done: int
    total: int
    notes: tuple[str, ...]
    wall_s: float
    signals: tuple[str, ...] = ()  # the protocols the agent used (analysis.signals)
    metrics: Mapping[str, Any] | None = None  # the ralph_metrics.jsonl line of this iteration
    info: tuple[str, ...] = ()  # what the iteration changed besides files (goal mode: steps added, completed)

    @property
    def overhead_s(self) -> float:
        """ralph's own time in this iteration: wall time minus the agent's."""
        return max(0.0, self.wall_s - self.result.duration_s)


@dataclass(frozen=True, slots=True)
class Notice:
    level: str  # info | warning
    message: str


@dataclass(frozen=True, slots=True)
class CircuitChanged:
    from_state: str  # CLOSED | HALF_OPEN | OPEN
    to_state: str
    reason: str
    guidance: str = ""  # what to check and how to reset, when it opened


@dataclass(frozen=True, slots=True)
class Waiting:
    """Emitted when a wait starts and about once a second while it lasts (a countdown)."""

    kind: str  # rate limit | usage limit | model backoff | API backoff | usage pause | circuit cooldown
    message: str
    until: datetime
    seconds_left: float
    first: bool = False  # the first tick of this wait
    done: bool = False  # the wait is over (the countdown line can be closed)


@dataclass(frozen=True, slots=True)
class LoopEnded:
    reason: ExitReason
    message: str
    iterations: int
    duration_s: float
    done: int
    total: int
    archived_to: str | None
    guidance: str = ""  # what to do next, after a halt a guard caused
