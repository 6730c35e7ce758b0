"""status.json (seed 003's fields and more): the run as the outside world sees it, kept by subscribing to
the engine's events and rewritten atomically after each. `ralph status` and the monitor read it."""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime
from typing import Any

from msgspec import Struct, field

from ralphloop.core.events import (
    AgentActivity,
    AgentOutput,
    AgentStarted,
    CircuitChanged,
    IterationFinished,
    IterationStarted,
    LoopEnded,
    RunStarted,
    Slot,
    Tally,
    UsageAnswered,
    Waiting,
)
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import iso
from ralphloop.files.schemas import STATUS
from ralphloop.files.store import atomic_write_json
from ralphloop.guards.budget import Budget
from ralphloop.records.trailing import Timer, Trailing, start_timer
from ralphloop.words.textsafe import one_line

ACTIVITY_EVERY_S = 1.0  # an agent can use tools and print fast: its activity and output are written at most this often
# Every write of status.json in this process: the engine's thread and the trailing write's timer take turns, and a
# run stopped at once (a second Ctrl+C) keeps it, so that no later write undoes its final state before it exits.
WRITING = threading.RLock()


class LiveStatus(Struct):
    """The run as status.json shows it; `write()` after every change."""

    path: str
    feature: str = ""
    feature_dir: str = ""
    agent: str = ""
    max_iterations: int | None = None
    api_calls_limit: int = 100
    started_at: datetime | None = None
    number: int = 0  # the current (or last) iteration's number: names its log
    status: str = "starting"
    stories_complete: int = 0
    stories_total: int = 0
    scope: str = ""
    current_story: str = ""
    log_file: str = ""
    last_outcome: str = ""
    exit_reason: str | None = None
    exit_message: str | None = None
    resets_at: datetime | None = None  # a stop at a usage limit or a window cap: its reset (a coordinator waits)
    last_message: str | None = None  # the agent's last words, when the stop needs the user
    api_calls_used: int = 0  # agent starts of this account in the last hour, every loop included
    rate_limit_resets_at: datetime | None = None
    last_signals: list[str] = field(default_factory=list)
    confidence: int | None = None
    refused_claim: str | None = None
    blocked_reason: str | None = None
    streaks: dict[str, int] = field(default_factory=dict)
    circuit_state: str = "CLOSED"
    circuit_reason: str | None = None
    guidance: str | None = None  # what to check and how to go on, once the loop halted for a guard
    waiting: dict[str, Any] | None = None  # {kind, message, until} while the loop waits
    usage_limit: dict[str, Any] | None = None  # the last vendor usage limit hit
    retry_count: int = 0  # failed attempts at the current task
    max_retries: int = 3
    model: str | None = None  # the model the agent last reported
    tally: Tally = field(default_factory=Tally)
    activity: str | None = None  # what the agent is doing now ("Bash: pytest -q"), when it says
    session_id: str | None = None  # the agent's last session id (Claude Code), for `claude --resume`
    in_iteration: bool = False  # an agent is working on iteration `number` (not counted yet)
    stories_at_start: int | None = None
    duration_s: float | None = None  # the ended run's wall time (LoopEnded): the monitor's summary says the same
    iteration_started_at: datetime | None = None
    iteration_timeout_s: float | None = None
    last_output_at: datetime | None = None
    budget: Budget = field(default_factory=Budget)
    pacing: dict[str, Any] | None = None  # the run's accounts and window caps (state/usage_windows.py reads them)

    def record_slot(self, slot: Slot) -> None:
        self.api_calls_used = slot.used
        self.rate_limit_resets_at = slot.resets_at

    def to_json(self, now: datetime) -> dict[str, object]:
        tally = self.tally
        return STATUS.dump(
            {
                "iteration": self.number,
                "totalIterations": self.number,  # the same number (older readers look here)
                "iterationsCounted": tally.counted,
                "callsNotCounted": tally.uncounted,
                "inIteration": self.in_iteration,
                "maxIterations": self.max_iterations,
                "status": self.status,
                "feature": self.feature,
                "featureDir": self.feature_dir,
                "storiesComplete": self.stories_complete,
                "storiesTotal": self.stories_total,
                "scope": self.scope or None,
                "currentStory": self.current_story,
                "apiCallsUsed": self.api_calls_used,
                "apiCallsLimit": self.api_calls_limit,
                "rateLimitResetsAt": _iso(self.rate_limit_resets_at),
                "startedAt": _iso(self.started_at),
                "lastUpdated": iso(now),
                "agent": self.agent,
                "pid": os.getpid(),
                "logFile": self.log_file,
                "lastOutcome": self.last_outcome,
                "exitReason": self.exit_reason,
                "exitMessage": self.exit_message,
                "resetsAt": _iso(self.resets_at),
                "lastMessage": self.last_message,
                "lastSignals": self.last_signals,
                "confidence": self.confidence,
                "refusedClaim": self.refused_claim,
                "blockedReason": self.blocked_reason,
                "blockedLoops": self.streaks.get("blocked", 0),
                "testOnlyLoops": self.streaks.get("test_only", 0),
                "questionLoops": self.streaks.get("question_only", 0),
                "circuitState": self.circuit_state,
                "circuitReason": self.circuit_reason,
                "guidance": self.guidance,
                "waiting": self.waiting,
                "usageLimit": self.usage_limit,
                "retryCount": self.retry_count,
                "maxRetries": self.max_retries,
                "model": self.model,
                "costUsd": round(tally.cost_usd, 6) if tally.cost_usd is not None else None,
                "tokensUsed": tally.tokens,  # input + output: what --max-tokens counts
                "tokens": tally.to_json(),
                "activity": self.activity,
                "sessionId": self.session_id,
                "storiesAtStart": self.stories_at_start,
                "iterationStartedAt": _iso(self.iteration_started_at),
                "iterationTimeoutS": self.iteration_timeout_s,
                "lastOutputAt": _iso(self.last_output_at),
                "maxCostUsd": self.budget.max_cost_usd,
                "maxTokens": self.budget.max_tokens,
                "maxRuntimeS": self.budget.max_runtime_s,
                "durationS": round(self.duration_s, 1) if self.duration_s is not None else None,
                "pacing": self.pacing,
            }
        )

    def write(self, now: datetime) -> None:
        # a view of the loop, written again at its next event: not worth an fsync each time (two an iteration)
        atomic_write_json(self.path, self.to_json(now), version=STATUS.version, marked=True, sync=False)


class StatusFile:
    """Subscribes to the engine's events and keeps status.json true. What the agent is doing and when it last
    printed change many times a second: they are written at most once every `every` seconds, the last change
    at the latest when its window ends (records/trailing.py)."""

    def __init__(
        self,
        path: str,
        now: Any,
        monotonic: Any,
        slots: Any = None,
        *,
        budget: Budget | None = None,
        pacing: dict[str, Any] | None = None,
        every: float = ACTIVITY_EVERY_S,
        timer: Timer = start_timer,
    ) -> None:
        self.live = LiveStatus(path, budget=budget or Budget(), pacing=pacing)
        self.now = now
        self.slots = slots  # the account's call slots as they are (a run that stops before any call shows them)
        self.trailing = Trailing(WRITING, self._write, every, monotonic, timer)

    def __call__(self, event: object) -> None:
        with WRITING:
            self._take(event)

    def _take(self, event: object) -> None:
        live = self.live
        if isinstance(event, AgentActivity):
            live.activity = event.text or None
            self.trailing.change()
            return
        if isinstance(event, AgentOutput):
            # every chunk moves it: written within the window, never on its own at once (an agent that ends
            # quickly has it carried by the iteration's own write, with no extra write in ralph's time)
            live.last_output_at = self.now()
            self.trailing.change(defer=True)
            return
        if isinstance(event, RunStarted):
            self._started(event)
        elif isinstance(event, AgentStarted):
            if not event.agent or event.agent == live.agent:
                return
            live.agent = event.agent  # failover: this iteration's agent
        elif isinstance(event, IterationStarted):
            live.number, live.status, live.activity, live.in_iteration = event.number, "running", None, True
            live.current_story, live.log_file = f"{event.task_id} - {event.task_title}", event.log_path
            live.retry_count, live.tally = event.attempt - 1, event.tally
            live.iteration_started_at, live.last_output_at = event.started_at, None
            live.record_slot(event.slot)
        elif isinstance(event, Waiting):
            live.waiting = (
                None if event.done else {"kind": event.kind, "message": event.message, "until": iso(event.until)}
            )
            if event.slot is not None:
                live.record_slot(event.slot)
            if not (event.first or event.done):
                return  # the countdown itself is the screen's; the file says what and until when
        elif isinstance(event, UsageAnswered):
            if live.usage_limit is not None:
                live.usage_limit = {**live.usage_limit, "policy": event.action}
        elif isinstance(event, CircuitChanged):
            live.circuit_state, live.circuit_reason = event.to_state, event.reason or None
        elif isinstance(event, IterationFinished):
            self._finished(event)
        elif isinstance(event, LoopEnded):
            live.status, live.exit_reason, live.exit_message = event.reason.status, event.reason.value, event.message
            live.resets_at = event.resets_at
            live.guidance, live.last_message, live.tally = (
                event.guidance or None,
                event.last_message or None,
                event.tally,
            )
            live.stories_complete, live.stories_total, live.activity, live.waiting = event.done, event.total, None, None
            live.in_iteration, live.duration_s = False, event.duration_s
            self.trailing.cancel()  # this write is the last
        else:
            return
        self._write()

    def _write(self) -> None:
        self.trailing.carried()
        self.live.write(self.now())

    def _started(self, event: RunStarted) -> None:
        live = self.live
        live.feature, live.feature_dir, live.agent = event.feature, event.feature_dir, event.agent
        live.max_iterations, live.api_calls_limit, live.started_at = (
            event.max_iterations,
            event.rate_limit,
            event.started_at,
        )
        live.max_retries, live.number, live.status, live.scope = event.max_retries, event.number, "running", event.scope
        live.circuit_state, live.circuit_reason = event.circuit_state, event.circuit_reason or None
        live.stories_complete, live.stories_total = event.done, event.total
        live.stories_at_start = event.done
        live.iteration_timeout_s = event.timeout_s if 0 < event.timeout_s < float("inf") else None
        if self.slots is not None:
            live.record_slot(self.slots())

    def _finished(self, event: IterationFinished) -> None:
        live, evidence = self.live, event.evidence
        live.activity, live.tally, live.in_iteration = None, event.tally, False
        live.stories_complete, live.stories_total = event.done, event.total
        live.last_outcome = f"iteration {event.number}: {event.status} ({event.task_id})"
        live.last_signals, live.refused_claim = list(event.signals), event.refused_claim
        confidence = evidence.get("confidence")
        live.confidence = confidence if isinstance(confidence, int) else None
        reason = evidence.get("blocked_reason")
        live.blocked_reason = one_line(str(reason), 500) if reason else None
        streaks = evidence.get("streaks")
        live.streaks = dict(streaks) if isinstance(streaks, dict) else {}
        state = event.state
        live.retry_count = int(state.get("retry_count", 0) or 0)
        live.session_id = str(state.get("session_id") or "") or live.session_id
        if event.usage_limit is not None:
            live.usage_limit = dict(event.usage_limit)
        if event.result.model:
            live.model = event.result.model


def _iso(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


def stopped_at_once(path: str, now: datetime, message: str) -> None:
    """status.json when ralph quits at once (a second Ctrl+C): no event will tell the sinks how the run ended,
    so it is written here, from the file as it stands, with the exit reason `interrupted`. Only this process's
    own file is changed: a run stopped before it began leaves the last run's as it was. The process exits right
    after: the write lock is kept, so that a trailing write on the timer's thread cannot come after this one."""
    WRITING.acquire(timeout=2.0)  # held by this thread (the signal came mid-write) or freed within one write
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return
    if not isinstance(found, dict) or found.get("pid") != os.getpid():
        return
    fields = STATUS.load(found)
    reason = ExitReason.INTERRUPTED
    fields.update(status=reason.status, exitReason=reason.value, exitMessage=message, lastUpdated=iso(now))
    fields.update(inIteration=False, activity=None, waiting=None)
    atomic_write_json(path, STATUS.dump(fields), version=STATUS.version, marked=True)
