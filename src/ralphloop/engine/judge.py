"""What one iteration means, as pure functions of what it showed: counted or not, a failed attempt or
progress, whether its work is undone, the breaker's new state, the facts for the decision table; then, with the
decision and what git failed at, whether its work is accepted (committed) and the words every record uses for it.
"""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.analysis.reading import IterationReading, attempt_failure, iteration_notes, next_prompt_notes
from ralphloop.analysis.signals import Analysis
from ralphloop.config.policy import Policy
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, Settlement, Task, TaskView
from ralphloop.engine.decide import Action, Decision, Observation
from ralphloop.engine.state import LoopState
from ralphloop.guards.backoff import model_check
from ralphloop.guards.breaker import Breaker, Transition, facts_of
from ralphloop.guards.budget import Spent, exceeded
from ralphloop.guards.usage import pause_for, wait_for
from ralphloop.words.textsafe import one_line


class Facts(Struct, frozen=True):
    """Everything one iteration showed, gathered by the phases that touch the world."""

    number: int
    task: Task
    result: AgentResult
    analysis: Analysis
    reading: IterationReading
    before: TaskView
    settled: Settlement  # its view is the task state after the iteration
    broken: str | None  # the task file could not be read after the agent
    interrupted: bool
    changed: tuple[str, ...]  # files the iteration changed (ralph's runtime files left out)
    gate_failures: tuple[str, ...]
    verify_failures: tuple[str, ...]  # post_iteration hooks that said "verification failed"
    marks_done: bool  # the format records a task done itself, on the agent's DONE
    left_git: str | None  # the agent left the run's branch, or a merge or rebase waiting: its work is not the run's
    now: datetime
    runtime_s: float  # the run's wall time so far


class Judged(Struct, frozen=True):
    """The iteration judged, before the decision."""

    state: LoopState
    breaker: Breaker
    transition: Transition | None
    observation: Observation
    counted: bool
    passed: bool
    progress: bool  # the task state moved
    task_failed: str | None
    rejected: str | None  # why the work is not the agent's to keep (uncounted: limit, API, model)
    limit: UsageLimit | None
    notes: tuple[str, ...]
    warning: str | None = None  # to tell the user once (the model could not be verified)

    @property
    def undo(self) -> bool:
        """Save its attempt, then put the workspace back: failed, rejected, or a call that did not count."""
        uncounted = self.observation.interrupted or self.limit is not None
        return self.task_failed is not None or self.rejected is not None or uncounted


class Verdict(Struct, frozen=True):
    """The iteration once decided: its status word, whether its work is accepted, and the decision as told."""

    status: str
    success: bool
    accepted: bool  # its work may be committed
    notes: tuple[str, ...]
    prompt_notes: tuple[str, ...]
    decision: Decision  # as told: a refusal the format already told is not told twice


def judge(state: LoopState, breaker: Breaker, facts: Facts, policy: Policy) -> Judged:
    """Counters, streaks, progress and the breaker after the iteration; the facts the decision needs."""
    r, a, settled = facts.result, facts.analysis, facts.settled
    limit = None if facts.interrupted else r.usage_limit
    switched = None if facts.interrupted else r.failover_to  # another agent takes over (agents/failover.py)
    kind = None if facts.interrupted or limit else r.error_kind
    fatal = r.error if kind is not None and kind.fatal and not switched else None
    transient = r.error if kind is not None and kind.transient else None
    skip = facts.interrupted or limit or fatal or transient or switched
    want = None if skip or not r.model_asked else policy.agent.model  # a failover agent runs its own default model
    mismatch, warning = model_check(want, policy.agent.poorman, r.model, warned=state.model_unverified)
    counted = not (facts.interrupted or switched) and limit is None and not (mismatch or fatal or transient)
    view, broken = settled.view, facts.broken or settled.error
    failures = facts.gate_failures + facts.verify_failures
    passed = facts.task.id in view.done_ids and broken is None and not failures
    progress = (
        broken is None
        and view.state != facts.before.state
        and settled.valid
        and not facts.verify_failures
        and not facts.reading.question_only
    )
    failure = facts.left_git or attempt_failure(
        facts.task.id, r, a, facts.reading, marks_done=facts.marks_done, passed=passed
    )
    task_failed = (settled.failed or failure) if counted else None
    retries = 0 if passed and counted and not task_failed else state.attempt_at(facts.task.id) + bool(task_failed)
    spent = state.tally.plus(r, counted=counted)
    new_state = replace(
        state,
        number=facts.number,
        task=facts.task.id,
        retries=retries,
        streaks=state.streaks.after(
            counted=counted,
            blocked=a.blocked,
            test_only=facts.reading.test_only,
            question_only=facts.reading.question_only,
        ),
        model_retry=state.model_retry + 1 if mismatch else 0 if counted else state.model_retry,
        transient_retry=state.transient_retry + 1 if transient else 0 if counted else state.transient_retry,
        tally=spent,
        model_unverified=state.model_unverified or warning is not None,
    )
    moved = f"{r.agent} {'is limited' if limit else 'cannot work'}: the next runs on {switched}" if switched else None
    rejected = mismatch or transient or fatal or (None if limit else moved)
    undone = task_failed is not None or rejected is not None or facts.interrupted or limit is not None
    transition = None
    if counted:
        churn = bool(facts.changed) and not progress
        proof = facts_of(facts.number, r, progress=progress, failed=task_failed, churn=churn, planning=settled.planning)
        breaker, transition = breaker.after(proof, policy.breaker, facts.now)
    obs = Observation(
        gate_failures=failures,
        claim_refused=settled.refused,
        all_done=view.all_done and broken is None and not undone,
        open_ids=facts.before.open_ids if undone else view.open_ids,  # an undone attempt's marks go with it
        claimed_complete=a.completion_claimed and not undone,  # trust mode too: not over an attempt undone
        interrupted=facts.interrupted,
        iterations_run=spent.counted,
        max_iterations=policy.loop.max_iterations,
        claim_sources=a.claim_sources,
        trust=policy.loop.completion == "trust",
        task_file_error=broken,
        needs_human=a.needs_human,
        blocked_streak=new_state.streaks.blocked,
        blocked_threshold=policy.loop.blocked_threshold,
        blocked_reason=a.blocked_reason,
        usage_limit=limit.message if limit else None,
        usage_action="exit" if policy.usage.action == "exit" else "wait",
        usage_wait_s=wait_for(limit, facts.now, policy.usage.margin_s, policy.usage.fallback_wait_s) if limit else 0.0,
        agent_fatal=fatal,
        failover=moved,
        transient_error=transient,
        transient_retry=new_state.transient_retry,
        transient_retries=policy.backoff.attempts,
        transient_wait_s=policy.backoff.delay(new_state.transient_retry) if transient else 0.0,
        model_mismatch=mismatch,
        model_retry=new_state.model_retry,
        model_retries=policy.backoff.attempts,
        model_wait_s=policy.backoff.delay(new_state.model_retry) if mismatch else 0.0,
        circuit_open=breaker.reason if counted and breaker.is_open else None,
        circuit_cooldown_s=policy.breaker.cooldown_s,
        task_failed=task_failed,
        attempt=retries,
        max_retries=policy.loop.max_retries,
        budget_exceeded=exceeded(policy.budget, Spent(spent.cost_usd, spent.tokens, facts.runtime_s))
        if counted
        else None,
        pause_s=pause_for(r.limit_warning, facts.now, policy.usage.pause_at, policy.usage.margin_s) if counted else 0.0,
        scope=view.scope,
        outside_open=view.outside_open,
    )
    notes = []
    if limit:
        notes.append(f"usage limit ({limit.vendor}): {limit.message}; not counted as an iteration")
    notes += [moved] if moved else []
    if mismatch:
        notes.append(f"model check: {mismatch}")
    if transient and not policy.backoff.exhausted(new_state.transient_retry):
        delay = policy.backoff.delay(new_state.transient_retry)
        notes.append(
            f"the agent's API failed, not the task: not counted as an iteration; retrying in {delay:g}s "
            f"(attempt {new_state.transient_retry}/{policy.backoff.attempts})"
        )
    return Judged(
        new_state, breaker, transition, obs, counted, passed, progress, task_failed, rejected, limit, (*notes,), warning
    )


def status_of(judged: Judged, decision: Decision, facts: Facts) -> str:
    """The iteration's status word (events.STATUSES); an undone attempt's says what kind it was."""
    if facts.interrupted:
        return "interrupted"
    if judged.limit:
        return "usage-limit"
    if judged.observation.transient_error:
        return "api-error"
    if judged.task_failed or judged.rejected or facts.result.failed or facts.reading.failed_here:
        return "failed"
    if decision.refused_claim:
        return "refused"
    if judged.passed:
        return "complete"
    return "blocked" if facts.analysis.blocked else "in-progress"


def verdict(judged: Judged, decision: Decision, facts: Facts, policy: Policy, git_failed: str | None) -> Verdict:
    """The status word, success, whether the work is accepted (committed); the decision as told: the table's, or,
    when git failed on the iteration's files, a stop with git's reason once it is recorded (docs/guards.md)."""
    a, reading = facts.analysis, facts.reading
    told = replace(decision, refused_claim=None) if facts.settled.refused_told else decision
    status = status_of(judged, decision, facts)
    # kept, never committed: a goal's steps its checks refute, a task file the loop halts on
    refuted = facts.gate_failures or facts.verify_failures or judged.observation.task_file_error
    accepted = judged.counted and not refuted and status in ("complete", "in-progress", "blocked")
    notes = list(iteration_notes(a, reading, judged.state.streaks, told.refused_claim, policy.loop.blocked_threshold))
    prompt_notes = next_prompt_notes(a, reading, told.refused_claim, policy.loop.blocked_threshold)
    if decision.action is Action.RETRY and judged.task_failed:
        prompt_notes.append(
            f"your previous attempt at {facts.task.id} failed ({one_line(judged.task_failed)}) and was undone; "
            f"this is attempt {judged.state.retries + 1} of {policy.loop.max_retries}: try another way"
        )
    return Verdict(
        status=status,
        success=accepted and judged.progress,
        accepted=accepted,
        notes=(*notes, *judged.notes),
        prompt_notes=(*prompt_notes, *facts.settled.prompt_notes),
        decision=Decision(Action.HALT, ExitReason.ERROR, git_failed) if git_failed else told,
    )
