"""What the engine tells the world. It never prints and never writes a record itself: the terminal, the
record files (progress.txt, metrics, status.json, state.json, ...), the monitor's event log and the
notifications subscribe to these. Every event carries its run's id, so one view can follow many loops.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import AgentResult

# An iteration's status word: complete (its task passes), in-progress, failed (the attempt failed: crash,
# timeout, FAIL, failed gate, wrong model), refused (a completion claim the task file refutes), blocked,
# interrupted, usage-limit, api-error. Only "complete" and "in-progress" can be a success.
STATUSES = ("complete", "in-progress", "failed", "refused", "blocked", "interrupted", "usage-limit", "api-error")


class Slot(Struct, frozen=True):
    """The account's hourly agent-call budget as one run sees it."""

    used: int
    limit: int
    resets_at: datetime | None = None


class AgentShare(Struct, frozen=True):
    """One agent's part of a run that failed over between agents: its calls, tokens (input + output) and cost."""

    agent: str
    calls: int = 0
    tokens: int | None = None
    cost_usd: float | None = None

    def plus(self, result: AgentResult) -> AgentShare:
        usage = result.usage
        used = usage.input_tokens + usage.output_tokens if usage else None
        return replace(
            self, calls=self.calls + 1, tokens=_plus(self.tokens, used), cost_usd=_plus(self.cost_usd, result.cost_usd)
        )


class Tally(Struct, frozen=True):
    """The run's numbers so far: one set, shown the same on every surface."""

    counted: int = 0  # iterations counted toward max_iterations (and the breaker, retries, success rate)
    uncounted: int = 0  # agent calls not counted: usage limit, API retry, wrong model, interrupted
    successes: int = 0  # counted iterations whose work was accepted and moved the task state
    input_tokens: int | None = None  # None until an agent reports tokens
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    agent_s: float = 0.0  # time the agents ran (wall time is the run's own)
    uncosted: int = 0  # calls that reported tokens but no cost: the cost above is not the whole spend
    by_agent: tuple[AgentShare, ...] = ()  # with failover (agents/failover.py): each agent's share, first used first

    @property
    def tokens(self) -> int | None:
        """Input + output: what --max-tokens counts (cache reads and writes are shown apart)."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def plus(self, result: AgentResult, *, counted: bool) -> Tally:
        """With one more agent call: its tokens by kind, its cost and time (unknown plus unknown stays unknown)."""
        usage = result.usage
        return replace(
            self,
            counted=self.counted + counted,
            uncounted=self.uncounted + (not counted),
            input_tokens=_plus(self.input_tokens, usage.input_tokens if usage else None),
            output_tokens=_plus(self.output_tokens, usage.output_tokens if usage else None),
            cache_read_tokens=_plus(self.cache_read_tokens, usage.cache_read_tokens if usage else None),
            cache_write_tokens=_plus(self.cache_write_tokens, usage.cache_creation_tokens if usage else None),
            cost_usd=_plus(self.cost_usd, result.cost_usd),
            agent_s=self.agent_s + max(0.0, result.duration_s),
            uncosted=self.uncosted + (result.cost_usd is None and usage is not None),
            by_agent=_shared(self.by_agent, result),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "counted": self.counted,
            "uncounted": self.uncounted,
            "successes": self.successes,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "costUsd": round(self.cost_usd, 6) if self.cost_usd is not None else None,
            "agentSeconds": round(self.agent_s, 1),
            "callsWithoutCost": self.uncosted,
            **({"byAgent": [_share_json(share) for share in self.by_agent]} if self.by_agent else {}),
        }


def _shared(shares: tuple[AgentShare, ...], result: AgentResult) -> tuple[AgentShare, ...]:
    """The shares with `result` added to its agent's (a result that names no agent: one agent, no shares)."""
    if not result.agent:
        return shares
    if all(share.agent != result.agent for share in shares):
        shares = (*shares, AgentShare(result.agent))
    return tuple(share.plus(result) if share.agent == result.agent else share for share in shares)


def _share_json(share: AgentShare) -> dict[str, Any]:
    cost = round(share.cost_usd, 6) if share.cost_usd is not None else None
    return {"agent": share.agent, "calls": share.calls, "tokens": share.tokens, "costUsd": cost}


def _plus(total: Any, more: Any) -> Any:
    if total is None and more is None:
        return None
    return (total or 0) + (more or 0)


class RunStarted(Struct, frozen=True):
    run_id: str
    feature: str
    feature_dir: str
    source_kind: str
    agent: str
    max_iterations: int | None
    timeout_s: float
    done: int
    total: int
    started_at: datetime
    metrics_file: str = ""  # where ralph_metrics.jsonl is, as shown to the user
    scope: str = ""  # a narrowed run: "story 8.3"
    max_retries: int = 3
    circuit_state: str = "CLOSED"
    circuit_reason: str = ""
    rate_limit: int = 100  # agent calls an hour, for the account
    number: int = 0  # the last iteration's number before this run (the next one is number + 1)


class IterationStarted(Struct, frozen=True):
    run_id: str
    number: int  # the iteration's one number: it names the log, the progress entry and the metrics line
    tally: Tally  # the run so far, before this iteration
    max_iterations: int | None
    task_id: str
    task_title: str
    log_path: str
    attempt: int  # 1 for a task's first attempt, 2 after one failed ...
    max_retries: int
    slot: Slot
    started_at: datetime
    prompt_path: str = ""
    state: Mapping[str, Any] = field(default_factory=dict)  # the loop's carried state, this number reserved
    # The workspace at its start (captures.WorkTree's fields) and the tasks done then: what the journal keeps, so
    # that the next run can save-and-undo or commit the work of an iteration ralph was killed in.
    start: Mapping[str, str | None] | None = None  # captures.WorkTree's fields
    done_ids: tuple[str, ...] = ()
    tag: str = ""  # RALPH_PROCESS_TAG of its agent (processes/reaper.py): finds what the agent left running


class AgentStarted(Struct, frozen=True):
    """The agent's process began (its PID is its process group's too)."""

    number: int
    pid: int
    agent: str = ""  # the backend running (with failover, the agent of this iteration)


class Undoing(Struct, frozen=True):
    """ralph is about to save and undo the iteration's attempt."""

    number: int


class IterationClosed(Struct, frozen=True):
    """The iteration is over: recorded, and its work committed when it was to be."""

    number: int


class AgentOutput(Struct, frozen=True):
    stream: str  # "stdout" or "stderr"
    data: bytes


class AgentActivity(Struct, frozen=True):
    """What the agent is doing now, when its output says (a tool use, an API retry)."""

    text: str


class IterationFinished(Struct, frozen=True):
    """One iteration, whole: every record and view is written from this alone."""

    run_id: str
    number: int
    counted: bool
    task_id: str
    task_title: str
    status: str  # one of STATUSES
    success: bool  # counted, accepted, and the task state moved
    result: AgentResult
    files_changed: tuple[str, ...]
    commit: str | None  # the agent's own commit(s): HEAD moved during the iteration
    done: int
    total: int
    notes: tuple[str, ...]
    wall_s: float
    tally: Tally  # the run so far, this iteration included
    finished_at: datetime
    signals: tuple[str, ...] = ()  # the protocols the agent used (analysis.signals)
    info: tuple[str, ...] = ()  # what the iteration changed besides files (goal mode: steps added, completed)
    failure: str | None = None  # why the attempt at the task failed (a crash, FAIL, a refuted claim, no DONE)
    source_kind: str = ""  # the task format: prd | todo | fix-plan | stories | goal
    learnings: tuple[str, ...] = ()
    agent: str = ""
    committing: bool = False  # ralph commits the iteration's work next (git.auto_commit)
    analysis: Mapping[str, Any] = field(default_factory=dict)  # `ralph analyze --json`'s fields
    evidence: Mapping[str, Any] = field(default_factory=dict)  # what the loop concluded from the analysis
    decision: str = "continue"  # continue | complete | halt | wait | retry
    exit_reason: str | None = None
    refused_claim: str | None = None
    attempt: int = 1  # this attempt's number at the task
    max_retries: int = 3
    next_prompt_notes: tuple[str, ...] = ()
    state: Mapping[str, Any] = field(default_factory=dict)  # the loop's carried state (state.json)
    usage_limit: Mapping[str, Any] | None = None  # {message, vendor, kind, resetsAt, policy}
    done_ids: tuple[str, ...] = ()  # the task state after it (state.json's completed list is kept from these)
    open_ids: tuple[str, ...] = ()
    recovered: bool = False  # written by the next run (ralph was killed): a record file that has it keeps it

    @property
    def overhead_s(self) -> float:
        """ralph's own time in this iteration: wall time minus the agent's."""
        return max(0.0, self.wall_s - self.result.duration_s)


class Committed(Struct, frozen=True):
    """ralph committed an iteration's work (git.auto_commit), after its records were written."""

    number: int
    commit: str
    message: str


class UsageAnswered(Struct, frozen=True):
    """The user (or nobody, in time) answered the usage-limit question: wait or exit."""

    action: str


class Steered(Struct, frozen=True):
    """The loop acted on what the user asked of it (core/steering.py: `ralph pause`, `resume`, `stop`, `say`,
    `answer`, or the page's buttons): told on every surface, with who asked it where and when."""

    action: str  # pause | resume | stop | say | answer
    source: str  # cli | web
    at: datetime  # when it was asked
    text: str = ""  # the guidance or the answer
    now: bool = False  # a stop that interrupts the iteration


class Archived(Struct, frozen=True):
    """A complete feature's folder was copied to the archive (seed 003), after its final records."""

    path: str


class Notice(Struct, frozen=True):
    level: str  # info | warning
    message: str


class CircuitChanged(Struct, frozen=True):
    from_state: str  # CLOSED | HALF_OPEN | OPEN
    to_state: str
    reason: str
    guidance: str = ""  # what to check and how to reset, when it opened


WINDOW_WAIT = "usage window"  # the Waiting kind of a hold at the user's cap on a usage window (engine/waits.py)
ANSWER = "answer"  # the Waiting kind of the loop's question to the user (core/waiting.py)
WAITING_WORDS = "waiting for your answer"  # what the question's Waiting says, after what it is about


class Waiting(Struct, frozen=True):
    """Emitted when a wait starts and about once a second while it lasts (a countdown)."""

    kind: str  # rate limit | usage limit | model backoff | API backoff | usage pause | circuit cooldown
    message: str
    until: datetime
    seconds_left: float
    first: bool = False  # the first tick of this wait
    done: bool = False  # the wait is over (the countdown line can be closed)
    slot: Slot | None = None  # waiting for the rate limit: the slots as they are


class LoopEnded(Struct, frozen=True):
    run_id: str
    reason: ExitReason
    message: str
    tally: Tally
    duration_s: float  # wall time of the whole run
    done: int
    total: int
    ended_at: datetime
    guidance: str = ""  # what to do next, after a halt a guard caused
    scope: str = ""  # a narrowed run: "story 8.3" (then COMPLETE means that scope, not the feature)
    last_message: str = ""  # the agent's last words, when the stop needs the user (blocked, circuit open)
    max_iterations: int | None = None
    state: Mapping[str, Any] = field(default_factory=dict)  # the loop's carried state (state.json)
    resets_at: datetime | None = None  # a stop at a usage limit or a cap on a window: when it resets (issue 37)

    @property
    def iterations(self) -> int:
        return self.tally.counted
