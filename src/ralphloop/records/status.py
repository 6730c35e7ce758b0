"""status.json (seed 003 fields and more): what the monitor and `ralph status` read, rewritten atomically."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralphloop.protocols import iso
from ralphloop.state.store import atomic_write_json

_HOUR = timedelta(hours=1)


@dataclass(slots=True)
class LiveStatus:
    """The run as the outside world sees it; `write()` after every change."""

    path: str
    feature: str
    feature_dir: str
    agent: str
    max_iterations: int | None
    api_calls_limit: int
    started_at: datetime
    iteration: int = 0
    total_iterations: int = 0
    status: str = "starting"
    stories_complete: int = 0
    stories_total: int = 0
    current_story: str = ""
    log_file: str = ""
    last_outcome: str = ""
    exit_reason: str | None = None
    exit_message: str | None = None
    call_times: list[datetime] = field(default_factory=list)
    last_signals: list[str] = field(default_factory=list)
    confidence: int | None = None
    refused_claim: str | None = None
    blocked_reason: str | None = None
    blocked_loops: int = 0
    test_only_loops: int = 0
    question_loops: int = 0

    def record_call(self, at: datetime) -> None:
        self.call_times.append(at)

    def calls_in_window(self, now: datetime) -> list[datetime]:
        self.call_times = [moment for moment in self.call_times if now - moment < _HOUR]
        return self.call_times

    def to_json(self, now: datetime) -> dict[str, object]:
        window = self.calls_in_window(now)
        return {
            "iteration": self.iteration,
            "maxIterations": self.max_iterations,
            "totalIterations": self.total_iterations,
            "status": self.status,
            "feature": self.feature,
            "featureDir": self.feature_dir,
            "storiesComplete": self.stories_complete,
            "storiesTotal": self.stories_total,
            "currentStory": self.current_story,
            "apiCallsUsed": len(window),
            "apiCallsLimit": self.api_calls_limit,
            "rateLimitResetsAt": iso(window[0] + _HOUR) if window else None,
            "startedAt": iso(self.started_at),
            "lastUpdated": iso(now),
            "agent": self.agent,
            "pid": os.getpid(),
            "logFile": self.log_file,
            "lastOutcome": self.last_outcome,
            "exitReason": self.exit_reason,
            "exitMessage": self.exit_message,
            "lastSignals": self.last_signals,
            "confidence": self.confidence,
            "refusedClaim": self.refused_claim,
            "blockedReason": self.blocked_reason,
            "blockedLoops": self.blocked_loops,
            "testOnlyLoops": self.test_only_loops,
            "questionLoops": self.question_loops,
        }

    def write(self, now: datetime) -> None:
        atomic_write_json(self.path, self.to_json(now))
