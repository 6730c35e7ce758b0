"""What one iteration means, as pure functions of what it showed: counted or not, a failed attempt or
progress, the breaker's new state, the facts for the decision table; then, with the decision, whether its
work is accepted (committed), undone, or kept aside, and the words every record uses for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from ralphloop.analysis.fingerprint import fingerprint, iteration_error
from ralphloop.analysis.signals import Analysis
from ralphloop.engine.decide import Action, Decision, Observation
from ralphloop.engine.policy import Policy
from ralphloop.engine.reading import IterationReading, iteration_notes, next_prompt_notes
from ralphloop.engine.state import LoopState, tallied
from ralphloop.events import Tally
from ralphloop.guards.backoff import model_matches
from ralphloop.guards.breaker import Breaker, IterationFacts, Transition
from ralphloop.guards.budget import Spent, exceeded
from ralphloop.guards.usage import UsageLimit
from ralphloop.protocols import AgentResult, Settlement, Task, TaskView, iso
from ralphloop.textsafe import one_line

_ERROR_SCAN = 64 * 1024  # how much of the reply's end is searched for error lines (the same-error fingerprint)


@dataclass(frozen=True, slots=True)
class Facts:
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
    stories: bool  # seed 002's story specs: [LEARN] lines in progress.txt
    now: datetime
    runtime_s: float  # the run's wall time so far


@dataclass(frozen=True, slots=True)
class Judged:
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


@dataclass(frozen=True, slots=True)
class Verdict:
    """The iteration once decided: its status word, and what happens to its work."""

    status: str
    success: bool
    accepted: bool  # its work may be committed
    undo: bool  # save its attempt, then put the workspace back
    notes: tuple[str, ...]
    prompt_notes: tuple[str, ...]
    marks: tuple[str, ...]
    decision: Decision  # as told: a refusal the format already told is not told twice


def judge(state: LoopState, breaker: Breaker, facts: Facts, policy: Policy, *, warned: bool = False) -> Judged:
    """Counters, streaks, progress and the breaker after the iteration; the facts the decision needs."""
    r, a, settled = facts.result, facts.analysis, facts.settled
    limit = None if facts.interrupted else r.usage_limit
    kind = None if facts.interrupted or limit else r.error_kind
    fatal = r.error if kind is not None and kind.fatal else None
    transient = r.error if kind is not None and kind.transient else None
    mismatch, warning = (None, None) if facts.interrupted or limit or fatal or transient else _model(policy, r, warned)
    counted = not facts.interrupted and limit is None and mismatch is None and fatal is None and transient is None
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
    task_failed = (settled.failed or _attempt_failure(facts, passed)) if counted else None
    retries = 0 if passed and not task_failed else state.attempt_at(facts.task.id) + (task_failed is not None)
    spent = tallied(state.tally, r, counted=counted, success=False)
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
    )
    rejected = mismatch or transient or fatal
    # a failed or rejected attempt is undone: the task state it shows is not the one the loop goes on from
    undone = (task_failed is not None or rejected is not None) and not facts.interrupted
    transition = None
    if counted:
        breaker, transition = breaker.after(_breaker_facts(facts, progress, task_failed), policy.breaker, facts.now)
    obs = Observation(
        gate_failures=failures,
        claim_refused=settled.refused,
        all_done=view.all_done and broken is None and not undone,
        open_ids=view.open_ids,
        claimed_complete=a.completion_claimed,
        interrupted=facts.interrupted,
        iterations_run=spent.counted,
        max_iterations=policy.max_iterations,
        claim_sources=a.claim_sources,
        trust=policy.completion == "trust",
        task_file_error=broken,
        needs_human=a.needs_human,
        blocked_streak=new_state.streaks.blocked,
        blocked_threshold=policy.blocked_threshold,
        blocked_reason=a.blocked_reason,
        usage_limit=limit.message if limit else None,
        usage_action="exit" if policy.usage.action == "exit" else "wait",
        usage_wait_s=usage_wait(limit, policy, facts.now) if limit else 0.0,
        agent_fatal=fatal,
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
        max_retries=policy.max_retries,
        budget_exceeded=_over_budget(policy, spent, facts.runtime_s) if counted else None,
        pause_s=_pause(r, policy, facts.now) if counted else 0.0,
        scope=view.scope,
        outside_open=view.outside_open,
    )
    notes = []
    if limit:
        notes.append(f"usage limit ({limit.vendor}): {limit.message}; not counted as an iteration")
    if mismatch:
        notes.append(f"model check: {mismatch}")
    if transient and not policy.backoff.exhausted(new_state.transient_retry):
        delay = policy.backoff.delay(new_state.transient_retry)
        notes.append(
            f"the agent's API failed, not the task: not counted as an iteration; retrying in {delay:g}s "
            f"(attempt {new_state.transient_retry}/{policy.backoff.attempts})"
        )
    return Judged(
        new_state,
        breaker,
        transition,
        obs,
        counted,
        passed,
        progress,
        task_failed,
        rejected,
        limit,
        tuple(notes),
        warning,
    )


def verdict(judged: Judged, decision: Decision, facts: Facts, policy: Policy) -> Verdict:
    """The status word, success, and the fate of the work: a failed or rejected attempt is saved and undone
    (whatever the loop does next); only accepted work is ever committed or counted a success."""
    a, reading = facts.analysis, facts.reading
    told = replace(decision, refused_claim=None) if facts.settled.refused_told else decision
    failed = judged.task_failed or judged.rejected or (facts.result.failed and not facts.interrupted)
    if facts.interrupted:
        status = "interrupted"
    elif judged.limit:
        status = "usage-limit"
    elif judged.observation.transient_error:
        status = "api-error"
    elif failed or reading.failed_here:
        status = "failed"
    elif decision.refused_claim:
        status = "refused"
    elif judged.passed:
        status = "complete"
    else:
        status = "blocked" if a.blocked else "in-progress"
    accepted = judged.counted and status in ("complete", "in-progress", "blocked")
    notes = list(iteration_notes(a, reading, judged.state.streaks, told.refused_claim, policy.blocked_threshold))
    prompt_notes = next_prompt_notes(a, reading, told, policy.blocked_threshold)
    if decision.action is Action.RETRY and judged.task_failed:
        prompt_notes.append(
            f"your previous attempt at {facts.task.id} failed ({one_line(judged.task_failed)}) and was undone; "
            f"this is attempt {judged.state.retries + 1} of {policy.max_retries}: try another way"
        )
    return Verdict(
        status=status,
        success=accepted and judged.progress,
        accepted=accepted,
        undo=bool(judged.task_failed or judged.rejected) and not facts.interrupted,
        notes=(*notes, *judged.notes),
        prompt_notes=(*prompt_notes, *facts.settled.prompt_notes),
        marks=_marks(facts, judged, policy),
        decision=told,
    )


def usage_wait(limit: UsageLimit, policy: Policy, now: datetime) -> float:
    """How long to wait for a usage limit: to the vendor's reset time plus the margin, or the fallback."""
    if limit.resets_at is None:
        return policy.usage.fallback_wait_s
    return max(0.0, (limit.resets_at - now).total_seconds()) + policy.usage.margin_s


def _attempt_failure(facts: Facts, passed: bool) -> str | None:
    """Why this attempt at the task failed (seed 002: crash, timeout, FAIL, no or another DONE), or None.
    A crash is a failure even when the task file says the task passes: the attempt did not finish."""
    r, a, reading = facts.result, facts.analysis, facts.reading
    if r.failed:
        return r.error or "the agent failed"
    if reading.failed_here:
        reasons = [failure.reason for failure in a.failed if failure.reason]
        return f"the agent signalled FAIL: {reasons[-1]}" if reasons else "the agent signalled FAIL"
    if facts.marks_done and not passed:  # the DONE tag is how a story gets done: without it, the attempt failed
        if reading.mismatched_done and facts.task.id not in a.done_ids:
            return f"mismatched: the agent signalled DONE {', '.join(reading.mismatched_done)}, not {facts.task.id}"
        return "no completion signal in output"
    return None


def _breaker_facts(facts: Facts, progress: bool, task_failed: str | None) -> IterationFacts:
    """A failed attempt (a crash, a timeout, FAIL, a refuted claim, no DONE) adds to the failure streak, not to
    the no-progress one: the task's retries stop it first."""
    r = facts.result
    # A bare "exit code 1" says nothing about which error it was: then the output's error lines decide.
    detailed = r.failed and r.error is not None and ": " in r.error
    error = iteration_error(
        failed=r.error if detailed else None,
        tool_errors=r.tool_errors,
        text=r.final_text[-_ERROR_SCAN:],  # errors end a reply; a hostile reply must not cost seconds here
    ) or (r.error if r.failed else task_failed)
    return IterationFacts(
        iteration=facts.number,
        progress=progress,
        failed=r.failed or task_failed is not None,
        error=error,
        fingerprint=fingerprint(error) if error else None,
        denials=r.permission_denials,
        churn=bool(facts.changed) and not progress,
    )


def _model(policy: Policy, r: AgentResult, warned: bool) -> tuple[str | None, str | None]:
    """(why the model is wrong, a warning when it cannot be told)."""
    want = policy.model
    if not want or policy.poorman:
        return None, None
    if r.model is None:
        return None, None if warned else f"cannot verify --model {want}: the agent did not report its model"
    return (None if model_matches(want, r.model) else f"got {r.model} instead of {want}"), None


def _over_budget(policy: Policy, tally: Tally, runtime_s: float) -> str | None:
    return exceeded(policy.budget, Spent(tally.cost_usd, tally.tokens, runtime_s))


def _pause(r: AgentResult, policy: Policy, now: datetime) -> float:
    """Near the limit (`usage_limit.pause_at`): seconds to pause until that window resets."""
    warning, pause_at = r.limit_warning, policy.usage.pause_at
    if warning is None or pause_at is None or warning.utilization < pause_at or warning.resets_at is None:
        return 0.0
    left = (warning.resets_at - now).total_seconds()
    return max(0.0, left) + policy.usage.margin_s if left > 0 else 0.0


def _marks(facts: Facts, judged: Judged, policy: Policy) -> tuple[str, ...]:
    """Seed 002's one-line records: [LEARN] lines in story mode, [FAIL] for a failed attempt."""
    name = f"Story {facts.task.id}" if facts.stories else facts.task.id
    marks = [f"[LEARN] {one_line(text)}" for text in facts.analysis.learnings] if facts.stories else []
    if judged.task_failed:
        marks.append(
            f"[FAIL] {name} - {one_line(judged.task_failed)} - {iso(facts.now)} "
            f"(attempt {judged.state.retries}/{policy.max_retries})"
        )
    return tuple(marks)
