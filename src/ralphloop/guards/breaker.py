"""The circuit breaker: a pure state machine over what each iteration proved.

CLOSED → HALF_OPEN after `half_open_after` iterations in a row without progress ("monitoring
mode"); → OPEN at `no_progress_threshold`, at `same_error_threshold` identical errors in a row,
at `failure_threshold` failed iterations in a row, or when tool permissions are denied in
`denial_threshold` iterations in a row. HALF_OPEN → CLOSED on the first iteration with progress.
OPEN stops the loop until a reset, or until `cooldown_s` has passed (then HALF_OPEN on probation:
the next iteration without progress opens it again at once).

No-progress and failure streaks are kept apart so that both thresholds stay alive: an iteration
that failed adds to the failure streak and leaves the no-progress streak where it was; a clean
iteration without progress adds to no-progress and ends the failure streak. Progress ends both.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from msgspec import Struct
from msgspec.structs import force_setattr, replace

from ralphloop.analysis.fingerprint import fingerprint, iteration_error
from ralphloop.core.protocols import AgentResult, iso
from ralphloop.files.schemas import BREAKER
from ralphloop.words.textsafe import one_line

HISTORY_KEEP = 200
_ERROR_SCAN = 64 * 1024  # how much of the reply's end is searched for error lines (the same-error fingerprint)


class CircuitState(Enum):
    CLOSED = "CLOSED"
    HALF_OPEN = "HALF_OPEN"
    OPEN = "OPEN"


class BreakerConfig(Struct, frozen=True):
    """The `circuit_breaker:` settings."""

    no_progress_threshold: int = 3
    half_open_after: int = 0  # 0: derived, 2 (or sooner, with a lower no_progress_threshold)
    same_error_threshold: int = 5
    failure_threshold: int = 5
    denial_threshold: int = 2
    cooldown_s: float | None = None  # OPEN → HALF_OPEN after this long; None: only a reset closes it

    def __post_init__(self) -> None:
        if self.half_open_after < 1:  # a frozen value: set once, while it is being made
            force_setattr(self, "half_open_after", min(2, self.no_progress_threshold))


class IterationFacts(Struct, frozen=True):
    """What one finished iteration proved, as the breaker needs it."""

    iteration: int
    progress: bool  # the workspace or the task state differs from the iteration-start snapshot
    failed: bool  # crash, non-zero exit, timeout without progress, is_error
    error: str | None = None  # the iteration's error text (for the reason shown to users)
    fingerprint: str | None = None  # analysis.fingerprint of that error
    denials: tuple[str, ...] = ()  # tools or commands the agent was refused permission for
    churn: bool = False  # files changed, yet no task advanced: a weaker signal, told in the reason
    # It was asked to plan only (goal mode): its no progress counts, but opening waits for an iteration asked to
    # act, which the format guarantees comes (a goal reflects after `idle-threshold` planning iterations).
    planning: bool = False


class Transition(Struct, frozen=True):
    at: datetime
    iteration: int
    from_state: CircuitState
    to_state: CircuitState
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "timestamp": _iso(self.at),
            "loop": self.iteration,
            "from_state": self.from_state.value,
            "to_state": self.to_state.value,
            "reason": self.reason,
        }


class Breaker(Struct, frozen=True):
    state: CircuitState = CircuitState.CLOSED
    no_progress: int = 0
    churn: int = 0  # of the no-progress iterations in a row, those that changed files
    same_error: int = 0
    failures: int = 0
    denial_streak: int = 0
    last_fingerprint: str | None = None
    last_error: str | None = None
    denied: tuple[str, ...] = ()
    reason: str = ""
    last_change: datetime | None = None
    opened_at: datetime | None = None
    last_progress_iteration: int = 0
    total_opens: int = 0
    probation: bool = False  # HALF_OPEN after a cooldown: one more iteration without progress reopens

    @property
    def is_open(self) -> bool:
        return self.state is CircuitState.OPEN

    # ------------------------------------------------------------------ transitions

    def after(self, facts: IterationFacts, config: BreakerConfig, now: datetime) -> tuple[Breaker, Transition | None]:
        """The breaker once `facts` are counted; the transition, if the state changed."""
        progressed = facts.progress and not facts.failed
        no_progress = 0 if progressed else self.no_progress if facts.failed else self.no_progress + 1
        failures = self.failures + 1 if facts.failed else 0
        churn = 0 if progressed else self.churn + (facts.churn and not facts.failed)
        if facts.fingerprint is None:
            same_error = 0
        elif facts.fingerprint == self.last_fingerprint:
            same_error = self.same_error + 1
        else:
            same_error = 1
        denial_streak = self.denial_streak + 1 if facts.denials else 0
        denied = tuple(dict.fromkeys((*self.denied, *facts.denials))) if facts.denials else ()
        counted = replace(
            self,
            no_progress=no_progress,
            churn=churn,
            failures=failures,
            same_error=same_error,
            denial_streak=denial_streak,
            denied=denied,
            last_fingerprint=facts.fingerprint,
            last_error=facts.error,
            last_progress_iteration=facts.iteration if progressed else self.last_progress_iteration,
        )
        target, reason = counted._target(facts, config, progressed)
        return counted._move(target, reason, facts.iteration, now)

    def _target(self, facts: IterationFacts, config: BreakerConfig, progressed: bool) -> tuple[CircuitState, str]:
        if self.denial_streak >= config.denial_threshold:
            names = ", ".join(self.denied[:8]) + (" …" if len(self.denied) > 8 else "")
            return CircuitState.OPEN, f"permission denied in {self.denial_streak} iterations in a row: {names}"
        if self.same_error >= config.same_error_threshold:
            return CircuitState.OPEN, f"the same error in {self.same_error} iterations in a row: {_cut(facts.error)}"
        if self.failures >= config.failure_threshold:
            return CircuitState.OPEN, f"{self.failures} failed iterations in a row; last: {_cut(facts.error)}"
        if self.probation and not progressed:
            what = f"failed ({_cut(facts.error)})" if facts.failed else "made no progress"
            return CircuitState.OPEN, f"the probing iteration after the cooldown {what}"
        if self.no_progress >= config.no_progress_threshold and not facts.planning:
            return CircuitState.OPEN, f"no progress in {self.no_progress} iterations in a row{self._churned()}"
        if progressed and self.state is not CircuitState.CLOSED:
            return CircuitState.CLOSED, f"circuit recovered: progress in iteration {facts.iteration}"
        if self.state is CircuitState.CLOSED and self.no_progress >= config.half_open_after:
            return (
                CircuitState.HALF_OPEN,
                f"monitoring mode: no progress in {self.no_progress} iterations in a row{self._churned()}",
            )
        return self.state, self.reason

    def _churned(self) -> str:
        """Files changed while no task advanced: the agent is busy, but not getting anywhere."""
        if not self.churn:
            return ""
        return f" (files changed in {self.churn} of them, but no task advanced)"

    def _move(
        self, target: CircuitState, reason: str, iteration: int, now: datetime
    ) -> tuple[Breaker, Transition | None]:
        if target is self.state:
            return replace(self, reason=reason if target is not CircuitState.CLOSED else ""), None
        moved = replace(
            self,
            state=target,
            reason=reason,
            last_change=now,
            opened_at=now if target is CircuitState.OPEN else self.opened_at,
            total_opens=self.total_opens + (target is CircuitState.OPEN),
            probation=False,
        )
        return moved, Transition(now, iteration, self.state, target, reason)

    def before_iteration(
        self, config: BreakerConfig, now: datetime, iteration: int
    ) -> tuple[Breaker, Transition | None]:
        """OPEN → HALF_OPEN (on probation) once the cooldown has passed; otherwise unchanged."""
        if self.state is not CircuitState.OPEN or config.cooldown_s is None or self.opened_at is None:
            return self, None
        if now - self.opened_at < timedelta(seconds=config.cooldown_s):
            return self, None
        minutes = config.cooldown_s / 60
        moved, transition = self._move(
            CircuitState.HALF_OPEN, f"cooldown of {minutes:g} min passed; trying again", iteration, now
        )
        return replace(
            moved, probation=True, no_progress=0, churn=0, failures=0, same_error=0, denial_streak=0
        ), transition

    def reset(self, why: str, now: datetime, iteration: int) -> tuple[Breaker, Transition]:
        """CLOSED with every counter zeroed (UC-6); the transition is logged even from CLOSED."""
        fresh = Breaker(
            state=CircuitState.CLOSED,
            last_change=now,
            total_opens=self.total_opens,
            last_progress_iteration=self.last_progress_iteration,
        )
        return fresh, Transition(now, iteration, self.state, CircuitState.CLOSED, f"reset: {why}")

    def cooldown_left(self, config: BreakerConfig, now: datetime) -> float | None:
        if self.state is not CircuitState.OPEN or config.cooldown_s is None or self.opened_at is None:
            return None
        return max(0.0, config.cooldown_s - (now - self.opened_at).total_seconds())

    # ------------------------------------------------------------------ the state file

    def to_json(self, iteration: int) -> dict[str, Any]:
        """`.circuit_breaker_state`: seed 000's fields, then ours (files/schemas.py: BREAKER)."""
        return BREAKER.dump(
            {
                "state": self.state.value,
                "last_change": _iso(self.last_change) if self.last_change else None,
                "consecutive_no_progress": self.no_progress,
                "consecutive_churn": self.churn,
                "consecutive_same_error": self.same_error,
                "consecutive_failures": self.failures,
                "consecutive_permission_denials": self.denial_streak,
                "last_progress_loop": self.last_progress_iteration,
                "total_opens": self.total_opens,
                "reason": self.reason,
                "current_loop": iteration,
                "opened_at": _iso(self.opened_at) if self.opened_at else None,
                "last_error": self.last_error,
                "last_error_fingerprint": self.last_fingerprint,
                "denied_commands": list(self.denied),
                "probation": self.probation,
            }
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Breaker:
        """The saved breaker; raises ValueError (or TypeError) on a malformed file."""
        denied = data.get("denied_commands") or []
        if not isinstance(denied, list):
            raise ValueError("denied_commands is not a list")
        return cls(
            state=CircuitState(data["state"]),
            no_progress=_count(data, "consecutive_no_progress"),
            churn=_count(data, "consecutive_churn"),
            same_error=_count(data, "consecutive_same_error"),
            failures=_count(data, "consecutive_failures"),
            denial_streak=_count(data, "consecutive_permission_denials"),
            last_fingerprint=_text(data.get("last_error_fingerprint")),
            last_error=_text(data.get("last_error")),
            denied=tuple(str(item) for item in denied),
            reason=str(data.get("reason") or ""),
            last_change=_moment(data.get("last_change")),
            opened_at=_moment(data.get("opened_at")),
            last_progress_iteration=_count(data, "last_progress_loop"),
            total_opens=_count(data, "total_opens"),
            probation=_flag(data.get("probation", False)),
        )


def facts_of(
    number: int, result: AgentResult, *, progress: bool, failed: str | None, churn: bool, planning: bool = False
) -> IterationFacts:
    """What an iteration proved, for the breaker. A failed attempt (a crash, a timeout, FAIL, a refuted claim,
    no DONE) adds to the failure streak, not to the no-progress one: the task's retries stop it first."""
    # A bare "exit code 1" says nothing about which error it was: then the output's error lines decide.
    detailed = result.failed and result.error is not None and ": " in result.error
    error = iteration_error(
        failed=result.error if detailed else None,
        tool_errors=result.tool_errors,
        text=result.final_text[-_ERROR_SCAN:],  # errors end a reply; a hostile reply must not cost seconds here
    ) or (result.error if result.failed else failed)
    return IterationFacts(
        iteration=number,
        progress=progress,
        failed=result.failed or failed is not None,
        error=error,
        fingerprint=fingerprint(error) if error else None,
        denials=result.permission_denials,
        churn=churn,
        planning=planning,
    )


def guidance(breaker: Breaker, flag: str, again: str = "") -> str:
    """What a user should check and how to go on, shown when the circuit opens. `flag`: the words that name
    the workspace to a `ralph` command, quoted (FeaturePaths.flag; "" when none are needed); `again`: the
    run's own command, flags and all (the same agent, the same limits)."""
    lines = [f"Circuit breaker OPEN: {breaker.reason}", "What to check:"]
    if breaker.denied:
        lines.append(
            "  - the agent was refused permission: allow those tools in the agent's own rules (claude.allowed_tools, "
            "opencode.json's permission, ...: docs/agents.md), use --permissions all only in a sandbox you can "
            "throw away, or change the task"
        )
    if breaker.last_error:
        lines.append(f"  - the last error: {_cut(breaker.last_error)}")
    named = f" {flag}" if flag else ""
    lines += [
        f"  - what the agent did in the last iterations (ralph logs{named}), and progress.txt (ralph status{named})",
        "  - whether the current task is too big or unclear: split it, or add detail to the task file",
        f"Then reset and continue: ralph reset-circuit{named}   (or: {_with_reset(again or 'ralph run' + named)})",
    ]
    return "\n".join(lines)


def _with_reset(command: str) -> str:
    return command if " --reset-circuit" in f"{command} " else f"{command} --reset-circuit"


def _cut(text: str | None, limit: int = 200) -> str:
    return one_line(text, limit) if text else "(no error text)"


_MAX_COUNT = 10**9  # far past any real streak; a hand-edited 1e30 would not fit the records' 64-bit integers


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT:
        raise ValueError(f"{key} is not a count")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("probation is not true or false")
    return value


def _moment(value: Any) -> datetime | None:
    if not value:
        return None
    if not isinstance(value, str):
        raise ValueError("a timestamp is not a string")
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # a hand-edited time without a zone is UTC


def _iso(moment: datetime) -> str:
    return iso(moment)
