"""status.json (seed 003 fields and more): what the monitor and `ralph status` read, rewritten atomically."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ralphloop.guards.ratelimit import Slot
from ralphloop.protocols import iso
from ralphloop.state.store import atomic_write_json


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
    api_calls_used: int = 0  # agent starts of this account in the last hour, every loop included
    rate_limit_resets_at: datetime | None = None
    last_signals: list[str] = field(default_factory=list)
    confidence: int | None = None
    refused_claim: str | None = None
    blocked_reason: str | None = None
    blocked_loops: int = 0
    test_only_loops: int = 0
    question_loops: int = 0
    circuit_state: str = "CLOSED"
    circuit_reason: str | None = None
    guidance: str | None = None  # what to check and how to go on, once the loop halted for a guard
    waiting: dict[str, Any] | None = None  # {kind, message, until} while the loop waits
    usage_limit: dict[str, Any] | None = None  # the last vendor usage limit hit: {message, resetsAt, vendor, kind}
    retry_count: int = 0  # failed attempts at the current task
    max_retries: int = 3
    model: str | None = None  # the model the agent last reported
    cost_usd: float | None = None  # this run so far, when the agent reports cost
    tokens: int | None = None
    activity: str | None = None  # what the agent is doing now ("Bash: pytest -q"), when it says
    session_id: str | None = None  # the agent's last session id (Claude Code), for `claude --resume`

    def record_slot(self, slot: Slot) -> None:
        self.api_calls_used = slot.used
        self.rate_limit_resets_at = slot.resets_at

    def to_json(self, now: datetime) -> dict[str, object]:
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
            "apiCallsUsed": self.api_calls_used,
            "apiCallsLimit": self.api_calls_limit,
            "rateLimitResetsAt": iso(self.rate_limit_resets_at) if self.rate_limit_resets_at else None,
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
            "circuitState": self.circuit_state,
            "circuitReason": self.circuit_reason,
            "guidance": self.guidance,
            "waiting": self.waiting,
            "usageLimit": self.usage_limit,
            "retryCount": self.retry_count,
            "maxRetries": self.max_retries,
            "model": self.model,
            "costUsd": round(self.cost_usd, 6) if self.cost_usd is not None else None,
            "tokensUsed": self.tokens,
            "activity": self.activity,
            "sessionId": self.session_id,
        }

    def write(self, now: datetime) -> None:
        atomic_write_json(self.path, self.to_json(now))
