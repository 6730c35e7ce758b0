"""One `ralph run`: iterations of a fresh agent process until the task source says done.

Per iteration: re-read tasks → snapshot git → build the prompt → run the agent (one
process, streamed log, timeout) → re-read tasks → decide → record. The engine never
prints: it emits events (events.py) and writes its records atomically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from ralphloop import captures, git
from ralphloop.analysis.fingerprint import fingerprint, iteration_error
from ralphloop.analysis.signals import Analysis, analyze, with_records
from ralphloop.archive import archive_copy
from ralphloop.cancel import CancelToken
from ralphloop.durations import format_duration
from ralphloop.engine import goal as goals
from ralphloop.engine.decide import Action, Decision, Observation, Streaks, decide
from ralphloop.engine.reading import IterationReading, iteration_notes, next_prompt_notes, read_iteration
from ralphloop.errors import RalphError
from ralphloop.events import (
    AgentActivity,
    AgentOutput,
    CircuitChanged,
    IterationFinished,
    IterationStarted,
    LoopEnded,
    Notice,
    RunStarted,
    Waiting,
)
from ralphloop.exitcodes import ExitReason
from ralphloop.guards.backoff import Backoff, model_matches
from ralphloop.guards.breaker import Breaker, BreakerConfig, CircuitState, IterationFacts, Transition, guidance
from ralphloop.guards.budget import Budget, Spent, exceeded
from ralphloop.guards.usage import UsageLimit
from ralphloop.hooks.gates import GateVerdict
from ralphloop.hooks.run import CommandRun
from ralphloop.hooks.runner import HookContext, HookRunner
from ralphloop.hooks.spec import CommandSpec, LifecycleHooks
from ralphloop.paths import FeaturePaths, display_path
from ralphloop.process import ProcessLimits, run_agent_process
from ralphloop.prompt import PromptParts, build_prompt
from ralphloop.protocols import (
    Agent,
    AgentCommand,
    AgentRequest,
    AgentResult,
    Clock,
    ErrorKind,
    EventSink,
    Task,
    TaskSource,
    TaskView,
    iso,
)
from ralphloop.records import signal_log
from ralphloop.records.exit_signals import ExitSignals, write_response_analysis
from ralphloop.records.metrics import append_metrics, metrics_line
from ralphloop.records.progress import ProgressEntry, append_entry, ensure_header
from ralphloop.records.status import LiveStatus
from ralphloop.state.calls import CallLedger
from ralphloop.state.circuit import append_history, load_breaker, save_breaker
from ralphloop.state.runstate import LastOutcome, RunState
from ralphloop.state.store import atomic_write_bytes
from ralphloop.textsafe import one_line


@dataclass(frozen=True, slots=True)
class LoopConfig:
    """The resolved knobs of one run."""

    max_iterations: int | None
    limits: ProcessLimits
    progress_bytes: int
    rate_limit_per_hour: int
    template: str
    archive: bool = True
    completion: str = "verify"
    blocked_threshold: int = 3
    max_retries: int = 3
    breaker: BreakerConfig = field(default_factory=BreakerConfig)
    usage_policy: str = "wait"  # wait | exit | ask (ask needs the `ask` callback; without one it waits)
    usage_margin_s: float = 60.0
    usage_fallback_wait_s: float = 30 * 60.0  # when the vendor gives no reset time
    usage_pause_at: float | None = None
    budget: Budget = field(default_factory=Budget)
    model: str | None = None
    poorman: bool = False
    backoff: Backoff = field(default_factory=Backoff)
    reset_circuit: str | None = None  # reset the breaker before the first iteration, for this reason
    auto_commit: bool = False  # commit each iteration's changes (seed 004)
    hooks: LifecycleHooks = field(default_factory=LifecycleHooks)
    gates: tuple[CommandSpec, ...] = ()  # quality_checks: run after an iteration that claims a task or completion


@dataclass(frozen=True, slots=True)
class LoopOutcome:
    reason: ExitReason
    message: str
    iterations: int
    duration_s: float
    archived_to: str | None = None
    guidance: str = ""


@dataclass(frozen=True, slots=True)
class _Judged:
    counted: bool  # counts toward max_iterations, the breaker and the retries
    fatal: str | None  # the agent cannot work at all: stop with this message
    transient: str | None  # the agent's API failed: retry after a backoff
    limit: UsageLimit | None
    usage_action: str
    usage_wait_s: float
    mismatch: str | None
    task_failed: str | None
    notes: tuple[str, ...]


def _status_word(
    result: AgentResult, judged: _Judged, passed: bool, reading: IterationReading, analysis: Analysis
) -> str:
    if result.interrupted:
        return "interrupted"
    if judged.limit:
        return "usage-limit"
    if judged.transient:
        return "api-error"
    if passed:
        return "complete"
    if result.failed or reading.failed_here or judged.mismatch or judged.task_failed:
        return "failed"
    return "blocked" if analysis.blocked else "in-progress"


@dataclass(slots=True)
class Checks:
    """What the post_iteration hooks, the quality gates and (goal mode) the JSON result made of one iteration."""

    claimed: bool = False  # the iteration says a task, a step or everything is done
    gates: GateVerdict = field(default_factory=GateVerdict)
    verify_failed: tuple[str, ...] = ()  # post_iteration hooks that exited 75
    applied: goals.Applied | None = None
    claim_refused: str | None = None
    notes: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    prompt_notes: list[str] = field(default_factory=list)

    @property
    def failures(self) -> tuple[str, ...]:
        return self.gates.failures + self.verify_failed

    @property
    def progress(self) -> bool:
        """False when verification failed, or when a goal iteration gave no valid JSON result."""
        return not self.verify_failed and (self.applied is None or self.applied.valid)

    @property
    def goal_changed(self) -> bool:
        return self.applied is not None and self.applied.changed

    @property
    def refused(self) -> str | None:
        return self.claim_refused or (self.applied.refused if self.applied else None)

    def told(self, decision: Decision) -> Decision:
        """The decision as the notes tell it: a goal-complete refused by the goal's own rules is told once,
        by the goal's notes, not again as a generic refused claim."""
        return replace(decision, refused_claim=None) if self.applied and self.applied.refused else decision

    def failed_claim(self, goal: object) -> str | None:
        """Why a task claimed done failed its checks: a failed attempt, saved, undone and tried again.
        In goal mode the claimed steps just stay pending (goal.apply_result)."""
        if goal is not None or not self.claimed or not self.failures:
            return None
        return f"quality checks fail: {', '.join(self.failures)}"


# Asks the user a question with a timeout; returns the answer, or None when nobody answered.
Ask = Callable[[str, float], str | None]
ASK_TIMEOUT_S = 30.0

_GOING_ON = (Action.CONTINUE, Action.WAIT, Action.RETRY)
# How much of the reply's end is searched for error lines (the same-error fingerprint).
_ERROR_SCAN = 64 * 1024


class Loop:
    """Drives one run over one feature; construct, then `run()` once."""

    def __init__(
        self,
        *,
        paths: FeaturePaths,
        source: TaskSource,
        agent: Agent,
        config: LoopConfig,
        clock: Clock,
        sink: EventSink,
        cancel: CancelToken,
        ledger: CallLedger,
        ask: Ask | None = None,
        goal: goals.GoalStore | None = None,
    ) -> None:
        self.paths = paths
        self.goal = goal  # goal mode (seed 001): the store of PROGRESS.yaml, which is also `source`
        self.source = source
        self.agent = agent
        self.config = config
        self.clock = clock
        self.emit = sink
        self.cancel = cancel
        self.ledger = ledger
        self.ask = ask
        self.state = RunState.load(paths.state, paths.logs)
        if self.state.last_exit_reason == ExitReason.BLOCKED.value:
            self.state.streaks.pop("blocked", None)  # the user has been told; a new run starts the count afresh
        if self.state.last_exit_reason == ExitReason.RETRIES_EXHAUSTED.value:
            self.state.retry_count = 0  # the human stepped in: the task gets its attempts again
        self.streaks = Streaks.from_counts(self.state.streaks)
        self.exit_signals = ExitSignals.load(paths.exit_signals)
        try:
            self.breaker = load_breaker(paths.circuit_state, display_path(paths.circuit_state, paths.project_root))
        except RalphError:
            if not config.reset_circuit:
                raise
            self.breaker = Breaker()  # a damaged file is what --reset-circuit is for
        self.git_root = git.toplevel(paths.project_root)
        self.scratch_index = captures.scratch_index(paths.project_root, paths.name) if self.git_root else None
        self.spent = Spent()
        self.counted = 0  # iterations that count toward max_iterations (not usage-limited, not a wrong model)
        self.model_retry = 0
        self.transient_retry = 0  # backoff retries of an API that is down, since the last counted iteration
        self.backoff_kind = "model backoff"  # what the last backoff waits for (a countdown's label)
        self.model_unknown_told = False
        self.activity_written = 0.0  # when status.json last got the agent's activity (written at most 1/s)
        self.run_started = 0.0
        self.hookrun = HookRunner(
            paths=paths,
            agent=agent,
            hooks=config.hooks,
            gates=config.gates,
            limits=config.limits,
            cancel=cancel,
            emit=sink,
            model=config.model,
        )
        self.status = LiveStatus(
            path=paths.status,
            feature=paths.name,
            feature_dir=paths.dir,
            agent=agent.name,
            max_iterations=config.max_iterations,
            api_calls_limit=config.rate_limit_per_hour,
            started_at=clock.now(),
            max_retries=config.max_retries,
            circuit_state=self.breaker.state.value,
            circuit_reason=self.breaker.reason or None,
        )

    # ------------------------------------------------------------------ the run

    def run(self) -> LoopOutcome:
        """Iterate until complete, halted or interrupted; records are final when this returns."""
        started = self.run_started = self.clock.monotonic()
        view = self.source.load()
        # seed 002: state.json's completed list is rebuilt from the task source (and progress.txt) when lost
        self.state.completed_ids = _completed(self.state.completed_ids, view)
        os.makedirs(self.paths.logs, exist_ok=True)
        ensure_header(self.paths.progress, self.paths.name, iso(self.clock.now()))
        self._set_counts(view)
        self.status.status = "running"
        self.status.total_iterations = self.state.iteration
        self.status.record_slot(self.ledger.peek(self.clock.now(), self.config.rate_limit_per_hour))
        self.status.write(self.clock.now())
        self.emit(
            RunStarted(
                feature=self.paths.name,
                feature_dir=self.paths.display(),
                source_kind=self.source.kind,
                agent=self.agent.name,
                max_iterations=self.config.max_iterations,
                timeout_s=self.config.limits.timeout_s,
                done=view.done_count,
                total=view.total,
                metrics_file=display_path(self.paths.metrics, self.paths.project_root),
            )
        )
        if self.config.reset_circuit:
            self.breaker, transition = self.breaker.reset(
                self.config.reset_circuit, self.clock.now(), self.state.iteration
            )
            self._circuit(transition)
        else:
            save_breaker(self.paths.circuit_state, self.breaker, self.state.iteration)  # readable from the start
        iterations = 0
        decision = Decision(Action.CONTINUE)
        try:
            self.hookrun.lifecycle("pre_run", self._context(view.next_task.id if view.next_task else ""))
            if view.all_done:
                decision = self._already_done()
            elif self.config.max_iterations == 0:
                decision = Decision(Action.HALT, ExitReason.MAX_ITERATIONS, "no iterations allowed")
            while decision.action in _GOING_ON:
                if self.cancel.is_set():
                    decision = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
                    break
                stop = self._guards_before()
                if stop is not None:
                    decision = stop
                    break
                if view.next_task is None:  # every task done, yet not complete: the gates failed
                    decision = self._already_done()
                    break
                iterations += 1
                view, decision = self._iteration(self.counted + 1, view)
                if decision.wait_s > 0 and decision.action in (Action.WAIT, Action.RETRY):
                    kind = "usage limit" if decision.action is Action.WAIT else self.backoff_kind
                    # never wait past the runtime budget: the next guard check then stops the run
                    if not self._wait(self._within_budget(decision.wait_s), kind, decision.message):
                        decision = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
        except RalphError as exc:
            decision = Decision(Action.HALT, ExitReason.ERROR, str(exc))
        assert decision.reason is not None
        return self._finish(decision, iterations, started)

    def _already_done(self) -> Decision:
        """Every task passes before any iteration: complete, once the quality gates agree."""
        verdict = self.hookrun.run_gates(self._context(""))
        if not verdict.failures:
            return Decision(Action.COMPLETE, ExitReason.COMPLETE, "every task already passes")
        for note in verdict.report(self.paths.project_root):
            self.emit(Notice("warning", note))
        return Decision(
            Action.HALT,
            ExitReason.ERROR,
            f"every task is done, but quality gates fail: {', '.join(verdict.failures)}; fix them, or reopen "
            "the task they concern, and run again",
        )

    def _context(self, task_id: str, number: int | None = None, transcript: str = "") -> HookContext:
        """The hook variables: in goal mode the sprint and its phase (the step, or the mode), else the
        feature and the task."""
        number = self.state.iteration if number is None else number
        sprint_id, phase = self.paths.name, task_id
        if self.goal is not None:
            try:
                progress = self.goal.progress()
            except RalphError:
                pass  # a damaged PROGRESS.yaml stops the loop elsewhere; the hooks still get the feature's name
            else:
                sprint_id, phase = progress.sprint_id, goals.phase_id(progress)
        if not transcript:  # the run's hooks: the last iteration's log, when there was one
            last = self.paths.iteration_log(number)
            transcript = last if os.path.isfile(last) else ""
        return HookContext(number, task_id, transcript, sprint_id, phase)

    def _guards_before(self) -> Decision | None:
        """Before an agent starts: the breaker (and its cooldown), the runtime budget, a rate-limit slot."""
        while True:
            self.breaker, transition = self.breaker.before_iteration(
                self.config.breaker, self.clock.now(), self.state.iteration
            )
            if transition:
                self._circuit(transition)
            if not self.breaker.is_open:
                break
            left = self.breaker.cooldown_left(self.config.breaker, self.clock.now())
            if left is None:
                return Decision(Action.HALT, ExitReason.CIRCUIT_OPEN, f"circuit breaker open: {self.breaker.reason}")
            if not self._wait(left, "circuit cooldown", f"circuit open ({self.breaker.reason}); cooling down"):
                return Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
        while True:
            over = self._over_budget()  # again after every wait: waiting spends the runtime budget too
            if over:
                return Decision(Action.HALT, ExitReason.BUDGET, over)
            now = self.clock.now()
            slot = self.ledger.take(now, self.config.rate_limit_per_hour)
            self.status.record_slot(slot)
            if slot.granted:
                return None
            message = f"rate limit reached: {slot.used}/{slot.limit} agent calls in the last hour"
            if not self._wait(self._within_budget(max(slot.wait_s(now), 1.0)), "rate limit", message):
                return Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")

    def _over_budget(self) -> str | None:
        spent = replace(self.spent, runtime_s=self.clock.monotonic() - self.run_started)
        return exceeded(self.config.budget, spent)

    def _within_budget(self, seconds: float) -> float:
        """`seconds`, cut to what is left of the runtime budget."""
        limit = self.config.budget.max_runtime_s
        if limit is None:
            return seconds
        return max(0.0, min(seconds, limit - (self.clock.monotonic() - self.run_started)))

    def _wait(self, seconds: float, kind: str, message: str) -> bool:
        """Wait with a countdown (events every second); False when interrupted."""
        until_mono = self.clock.monotonic() + seconds
        until = self.clock.now() + timedelta(seconds=seconds)
        self.status.waiting = {"kind": kind, "message": message, "until": iso(until)}
        self.status.write(self.clock.now())
        first = True
        try:
            while True:
                if self.cancel.is_set():
                    return False
                left = until_mono - self.clock.monotonic()
                if left <= 0:
                    return True
                self.emit(Waiting(kind, message, until, left, first=first))
                first = False
                self.clock.sleep(min(1.0, left), self.cancel.fileno())
        finally:
            self.status.waiting = None
            self.status.write(self.clock.now())
            self.emit(Waiting(kind, message, until, 0.0, done=True))

    def _circuit(self, transition: Transition) -> None:
        """Record a breaker transition: state file, bounded history, status.json and an event."""
        save_breaker(self.paths.circuit_state, self.breaker, self.state.iteration)
        append_history(self.paths.circuit_history, [transition])
        self.status.circuit_state = self.breaker.state.value
        self.status.circuit_reason = self.breaker.reason or None
        opened = transition.to_state is CircuitState.OPEN
        self.emit(
            CircuitChanged(
                transition.from_state.value,
                transition.to_state.value,
                transition.reason,
                guidance(self.breaker, self.paths.name) if opened else "",
            )
        )

    def _finish(self, decision: Decision, iterations: int, started: float) -> LoopOutcome:
        assert decision.reason is not None
        self._hooks_ended(self.hookrun.stop(cancel=decision.reason is ExitReason.INTERRUPTED))
        now = self.clock.now()
        advice = self._guidance(decision)
        self.status.status = decision.reason.status
        self.status.exit_reason = decision.reason.value
        self.status.exit_message = decision.message
        self.status.guidance = advice or None
        self.status.write(now)
        self.state.last_exit_reason = decision.reason.value
        self.state.updated_at = iso(now)
        self.state.save(self.paths.state)
        archived = None
        if (
            decision.reason is ExitReason.COMPLETE
            and self.config.archive
            and iterations > 0
            and self.paths.is_feature_folder
        ):
            try:
                archived = archive_copy(self.paths, now)
            except OSError as exc:  # the work is done and recorded; a failed copy must not hide that
                self.emit(Notice("warning", f"could not archive {self.paths.display()}: {exc}"))
        self._end_hooks(decision)
        self.hookrun.close()
        outcome = LoopOutcome(
            decision.reason, decision.message, iterations, self.clock.monotonic() - started, archived, advice
        )
        self.emit(
            LoopEnded(
                reason=outcome.reason,
                message=outcome.message,
                iterations=iterations,
                duration_s=outcome.duration_s,
                done=self.status.stories_complete,
                total=self.status.stories_total,
                archived_to=archived,
                guidance=advice,
            )
        )
        return outcome

    def _end_hooks(self, decision: Decision) -> None:
        """on_complete, on_error or on_halt, once the records are final; told why through the environment."""
        assert decision.reason is not None
        if decision.reason is ExitReason.COMPLETE:
            event = "on_complete"
        elif decision.reason in (ExitReason.ERROR, ExitReason.AGENT_ERROR):
            event = "on_error"
        else:
            event = "on_halt"
        extra = {
            "RALPH_EXIT_REASON": decision.reason.value,
            "RALPH_EXIT_CODE": str(decision.reason.exit_code),
            "RALPH_EXIT_MESSAGE": one_line(decision.message, 1000),
        }
        self.hookrun.lifecycle(event, self._context(self.state.current_task), extra)

    def _guidance(self, decision: Decision) -> str:
        """What the user should do next, for the halts a guard caused."""
        name = self.paths.name
        if decision.reason is ExitReason.CIRCUIT_OPEN:
            return guidance(self.breaker, name)
        if decision.reason is ExitReason.RETRIES_EXHAUSTED:
            task = self.state.current_task
            return (
                f"Human intervention required: {task} failed {self.state.retry_count} times. Read the failed "
                f"attempts (logs/iteration-N.patch and `git log refs/ralph/attempts/`), fix the cause or the "
                f"task, then run: ralph run -s {task} -f {name}"
            )
        if decision.reason is ExitReason.USAGE_LIMIT:
            limit = self.status.usage_limit or {}
            when = limit.get("resetsAt") or "an unknown time"
            return f"The usage limit resets at {when}. Then run: ralph run -f {name}"
        if decision.reason is ExitReason.BUDGET:
            how = "--max-cost, --max-tokens, --max-runtime or budget: in config"
            return f"Raise the budget ({how}), then: ralph run -f {name}"
        if decision.reason is ExitReason.MODEL_MISMATCH:
            return "Request another model (--model), or accept any model with --poorman"
        if decision.reason is ExitReason.AGENT_ERROR:
            return f"Fix what the message says, then run: ralph run -f {name}"
        return ""

    # ------------------------------------------------------------------ one iteration

    def _iteration(self, iteration: int, view: TaskView) -> tuple[TaskView, Decision]:
        began = self.clock.monotonic()
        task = view.next_task
        assert task is not None
        number = self.state.iteration + 1
        self._hooks_ended(self.hookrun.collect())
        start = self._capture()
        prompt = self._prompt(number, task)
        log_path = self.paths.iteration_log(number)
        context = self._context(task.id, number, log_path)
        signals_offset = signal_log.size(self.paths.signals)
        self._begin(iteration, number, task, prompt, log_path, context)

        result = self._run_agent(prompt, number, task, log_path)

        notes = [f"agent failed: {result.error}"] if result.error and not result.interrupted else []
        after_view, broken = self._reread(view, notes)
        interrupted = result.interrupted or self.cancel.is_set()
        new = signal_log.read_new(self.paths.signals, signals_offset, number)
        analysis = with_records(analyze(result.final_text, prompt), new.records)
        notes += new.problems
        if self.source.marks_done and broken is None and not interrupted and _says_done(task, result, analysis):
            notes += self.source.mark_done(task, iso(self.clock.now()))
            after_view = self.source.load()
        # after ralph's own mark: undoing a refused attempt must undo the mark too
        end = self._capture()
        changed = self._changed(start, end)
        commit = end.head[:12] if end and end.head and (start is None or end.head != start.head) else None
        clean = broken is None and not interrupted and _ran_clean(result)
        checks = self._checks(context, view, after_view, analysis, clean, settled=broken is None and not interrupted)
        if self.goal is not None and clean:
            after_view, broken = self._apply_goal(analysis, checks, after_view)
        reading = read_iteration(analysis, task, after_view, changed, view_valid=broken is None)
        passed = task.id in after_view.done_ids and broken is None and not checks.failures
        judged = self._judge(task, result, analysis, reading, passed, interrupted, checks.failed_claim(self.goal))
        if judged.counted:
            progress = self._made_progress(task, start, end, changed, view, after_view) or checks.goal_changed
            self._count_in_breaker(number, result, progress and checks.progress and not reading.question_only)
        decision = decide(self._observation(after_view, broken, analysis, judged, result, checks))
        streaks = self.streaks
        notes += iteration_notes(
            analysis, reading, streaks, checks.told(decision).refused_claim, self.config.blocked_threshold
        )
        notes += [*judged.notes, *checks.notes]
        marks = self._marks(task, judged, analysis.learnings)
        if decision.action is Action.RETRY:
            after_view = self._retry(start, end, number, task, after_view, notes)
        status = _status_word(result, judged, passed, reading, analysis)
        self.state.next_prompt_notes = self._next_prompt_notes(task, analysis, reading, checks.told(decision), judged)
        self.state.next_prompt_notes += checks.prompt_notes
        self._record_analysis(number, analysis, reading, decision, interrupted)
        self._record_guards(result, judged.limit, judged.usage_action)

        commit = self._record(
            number,
            task,
            status,
            result,
            changed,
            commit,
            notes,
            checks.info,
            after_view,
            analysis,
            marks,
            decision,
            start,
        )
        self._finished(
            iteration, number, task, status, result, changed, commit, after_view, notes, began, analysis, checks.info
        )
        if self.goal is not None and judged.counted and not interrupted:
            self._per_iteration_hooks(context)
        return after_view, decision

    def _record(
        self,
        number: int,
        task: Task,
        status: str,
        result: AgentResult,
        changed: list[str],
        commit: str | None,
        notes: list[str],
        info: list[str],
        view: TaskView,
        analysis: Analysis,
        marks: list[str],
        decision: Decision,
        start: captures.WorkTree | None,
    ) -> str | None:
        """The iteration's records; then, with git.auto_commit, its commit. Returns the commit to show."""
        signals = [f"signals: {', '.join(analysis.signals)}"] if analysis.signals else []
        interrupted = result.interrupted or self.cancel.is_set()
        committing = self._should_commit(decision, changed, interrupted)
        if committing:
            notes.append("changes committed by ralph (git.auto_commit)")
        now = iso(self.clock.now())
        exit_text = "not started" if result.exit_code is None else f"exit {result.exit_code}"
        if result.timed_out:
            exit_text = "timed out"
        agent_line = f"{self.agent.name} · {exit_text} · {format_duration(result.duration_s)}"
        append_entry(
            self.paths.progress,
            ProgressEntry(
                iteration=number,
                date=now,
                story=f"{task.id} - {task.title}",
                status=status,
                files_changed=changed,
                learnings=analysis.learnings,
                commit=commit,
                agent=agent_line,
                notes=signals + notes + info,
                marks=tuple(marks),
            ),
        )
        self.state.completed_ids = _completed(self.state.completed_ids, view)
        if status == "complete":
            self.state.retry_count = 0
            self.status.retry_count = 0
        self.state.streaks = self.streaks.counts()
        self.state.last_outcome = LastOutcome(number, task.id, status, result.exit_code, result.error, now)
        self.state.updated_at = now
        self.state.save(self.paths.state)
        self._set_counts(view)
        self.status.last_outcome = f"iteration {number}: {status} ({task.id})"
        self.status.write(self.clock.now())

        if committing:
            commit = self._auto_commit(task, start) or commit
        return commit

    def _finished(
        self,
        iteration: int,
        number: int,
        task: Task,
        status: str,
        result: AgentResult,
        changed: list[str],
        commit: str | None,
        view: TaskView,
        notes: list[str],
        began: float,
        analysis: Analysis,
        info: list[str],
    ) -> None:
        """The iteration's metrics line, then its IterationFinished event."""
        metrics = self._metrics(number, task, status, result, len(changed))
        self.emit(
            IterationFinished(
                iteration=iteration,
                number=number,
                task_id=task.id,
                status=status,
                result=result,
                files_changed=tuple(changed),
                commit=commit,
                done=view.done_count,
                total=view.total,
                notes=tuple(notes),
                wall_s=self.clock.monotonic() - began,
                signals=analysis.signals,
                metrics=metrics,
                info=tuple(info),
            )
        )

    # ------------------------------------------------------------------ hooks, gates and the goal

    def _checks(
        self,
        context: HookContext,
        before: TaskView,
        after: TaskView,
        analysis: Analysis,
        clean: bool,
        *,
        settled: bool,
    ) -> Checks:
        """post_iteration hooks, then the quality gates when the iteration claims a task or completion.
        After a failed agent run only the gates run, and only when every task looks done: that is a
        completion the gates must confirm, whoever made it."""
        checks = Checks()
        if self.goal is not None and analysis.completion_claimed and not clean:
            checks.claim_refused = "the agent's run did not end cleanly: its completion claim is not taken"
        if not clean:
            if settled and after.all_done and self.config.gates:
                checks.claimed = True
                self._gate(checks, context)
            return checks
        runs = self.hookrun.lifecycle("post_iteration", context)
        refused = [run for run in runs if run.verify_failed]
        if refused:
            checks.verify_failed = tuple(f"post_iteration hook {run.name}" for run in refused)
            for run in refused:
                reason = _tail(run, 10)
                checks.notes.append(f"verification failed: {run.summary()}; the iteration is not progress")
                checks.prompt_notes.append(
                    "the post_iteration check failed (verification failed)" + (f":\n{reason}" if reason else "")
                )
        checks.claimed = self._claims(before, after, analysis)
        if checks.claimed and self.config.gates:
            self._gate(checks, context)
        return checks

    def _gate(self, checks: Checks, context: HookContext) -> None:
        """Run the quality gates; what fails goes to the iteration's log, progress.txt and the next prompt."""
        checks.gates = self.hookrun.run_gates(context)
        report = checks.gates.report(self.paths.project_root)
        checks.prompt_notes += report
        checks.notes += checks.gates.summaries(self.paths.project_root)
        if report:
            _append_log(context.transcript, "\n\n".join(report))

    def _claims(self, before: TaskView, after: TaskView, analysis: Analysis) -> bool:
        """Whether the iteration says something is done: a task newly done, a completion claim, or (goal
        mode) steps reported complete."""
        result = analysis.json_result
        if (
            self.goal is not None
            and result is not None
            and (result.completed_step_ids or result.status == "goal-complete")
        ):
            return True
        return bool(after.done_ids - before.done_ids) or analysis.completion_claimed or after.all_done

    def _apply_goal(self, analysis: Analysis, checks: Checks, view: TaskView) -> tuple[TaskView, RalphError | None]:
        """The JSON result applied to PROGRESS.yaml; the view re-read."""
        assert self.goal is not None
        now = iso(self.clock.now())
        try:
            progress, applied = goals.apply_result(
                self.goal.progress(), analysis.json_result, analysis.json_error, now=now, gate_failures=checks.failures
            )
            self.goal.save(progress)
            checks.applied = applied
            checks.notes += applied.notes
            checks.info += applied.info
            checks.prompt_notes += applied.prompt_notes
            if analysis.completion_claimed and analysis.json_status != "goal-complete":
                checks.claim_refused = (
                    "in goal mode the goal is complete when a JSON result with status goal-complete says so, "
                    "and ralph accepts it"
                )
            return self.source.load(), None
        except RalphError as exc:
            checks.notes.append(f"goal progress invalid: {exc}")
            return view, exc

    def _per_iteration_hooks(self, context: HookContext) -> None:
        assert self.goal is not None
        try:
            hooks = self.goal.progress().hooks
        except RalphError as exc:
            self.emit(Notice("warning", f"per-iteration hooks skipped: {exc}"))
            return
        self.hookrun.per_iteration(hooks, context, lambda hook, run: self._hook_record(context.number, hook.id, run))

    def _hooks_ended(self, finished: list[tuple[Hashable, CommandRun]]) -> None:
        for key, run in finished:
            assert isinstance(key, tuple)
            hook_id, number = key
            self._hook_record(number, hook_id, run)

    def _hook_record(self, number: int, hook_id: str, run: CommandRun | None) -> None:
        """hook-tasks in PROGRESS.yaml: spawned when a hook starts, completed or failed when it ends."""
        if self.goal is None:
            return
        now = iso(self.clock.now())
        try:
            progress = self.goal.saved_progress()
            spawned = next(
                (t.spawned_at for t in progress.hook_tasks if (t.iteration, t.hook_id) == (number, hook_id)), now
            )
            if run is None:
                task = goals.HookTask(number, hook_id, "spawned", now)
            else:
                status = "completed" if run.ok else "failed"
                task = goals.HookTask(number, hook_id, status, spawned, now, run.exit_code)
                self.hookrun.tell(f"per-iteration hook {run.summary()}", run.ok)
            self.goal.save(goals.record_hook(progress, task))
        except (RalphError, OSError) as exc:  # a hook's record must never stop the loop
            self.emit(Notice("warning", f"could not record hook {hook_id} of iteration {number}: {exc}"))

    def _reread(self, view: TaskView, notes: list[str]) -> tuple[TaskView, RalphError | None]:
        """The task source after the agent; when the agent left it invalid, the old view and the error.
        In goal mode PROGRESS.yaml is ralph's alone: an edit the agent made is undone first."""
        if self.goal is not None and self.goal.restore_own():
            notes.append(
                "PROGRESS.yaml was edited during the iteration: ralph's copy is back (report through the JSON result)"
            )
        try:
            return self.source.load(), None
        except RalphError as exc:  # recorded, then the decision table stops the loop
            notes.append(f"task file invalid after this iteration: {exc}")
            return view, exc

    def _next_prompt_notes(
        self, task: Task, analysis: Analysis, reading: IterationReading, decision: Decision, judged: _Judged
    ) -> list[str]:
        notes = next_prompt_notes(analysis, reading, decision, self.config.blocked_threshold)
        if decision.action is Action.RETRY and judged.task_failed:
            notes.append(
                f"your previous attempt at {task.id} failed ({one_line(judged.task_failed)}) and was undone; "
                f"this is attempt {self.state.retry_count + 1} of {self.config.max_retries}: try another way"
            )
        return notes

    def _begin(self, iteration: int, number: int, task: Task, prompt: str, log_path: str, context: HookContext) -> None:
        """Everything written before the agent starts: its prompt, state.json, status.json, PROGRESS.yaml's
        stats; then the pre_iteration hooks."""
        with open(self.paths.iteration_prompt(number), "w", encoding="utf-8") as handle:
            handle.write(prompt)
        if self.state.current_task != task.id:
            self.state.retry_count = 0
        self.state.iteration, self.state.current_task = number, task.id
        self.state.updated_at = iso(self.clock.now())
        self.state.save(self.paths.state)  # before the agent starts: a crash never reuses this number
        self.status.iteration, self.status.total_iterations = iteration, number
        self.status.current_story, self.status.log_file = f"{task.id} - {task.title}", log_path
        self.status.retry_count = self.state.retry_count
        self.status.write(self.clock.now())
        self.emit(IterationStarted(iteration, number, self.config.max_iterations, task.id, task.title, log_path))
        if self.goal is not None:
            self.goal.save(goals.begin(self.goal.progress(), iso(self.clock.now()), self.config.max_iterations))
        self.hookrun.lifecycle("pre_iteration", context)

    # ------------------------------------------------------------------ guards after the agent

    def _judge(
        self,
        task: Task,
        result: AgentResult,
        analysis: Analysis,
        reading: IterationReading,
        passed: bool,
        interrupted: bool,
        gate_failed: str | None = None,
    ) -> _Judged:
        """What the guards make of the iteration: counted or not, a failed attempt, a limit, a wrong model."""
        limit = None if interrupted else result.usage_limit
        kind = None if interrupted or limit else result.error_kind
        fatal = result.error if kind is not None and kind.fatal else None
        transient = result.error if kind is not None and kind.transient else None
        mismatch = None if interrupted or limit or fatal or transient else self._model_mismatch(result)
        counted = not interrupted and limit is None and mismatch is None and fatal is None and transient is None
        self.streaks = self.streaks.after(  # an interrupted iteration leaves the counts alone
            counted=counted,
            blocked=analysis.blocked,
            test_only=reading.test_only,
            question_only=reading.question_only,
        )
        task_failed = (
            (gate_failed or self._task_failure(task, result, analysis, reading)) if counted and not passed else None
        )
        if task_failed:
            self.state.retry_count += 1
        if counted:
            self.counted += 1
        self.model_retry = self.model_retry + 1 if mismatch else 0 if counted else self.model_retry
        self.transient_retry = self.transient_retry + 1 if transient else 0 if counted else self.transient_retry
        self.backoff_kind = "API backoff" if transient else "model backoff"
        self.spent = self.spent.plus(result.cost_usd, result.tokens)
        usage_action, usage_wait = self._usage_answer(limit) if limit else ("wait", 0.0)
        notes = []
        if limit:
            notes.append(f"usage limit ({limit.vendor}): {limit.message}; not counted as an iteration")
        if mismatch:
            notes.append(f"model check: {mismatch}")
        if transient and not self.config.backoff.exhausted(self.transient_retry):
            delay = self.config.backoff.delay(self.transient_retry)
            notes.append(
                f"the agent's API failed, not the task: not counted as an iteration; retrying in {delay:g}s "
                f"(attempt {self.transient_retry}/{self.config.backoff.attempts})"
            )
        return _Judged(
            counted=counted,
            fatal=fatal,
            transient=transient,
            limit=limit,
            usage_action=usage_action,
            usage_wait_s=usage_wait,
            mismatch=mismatch,
            task_failed=task_failed,
            notes=tuple(notes),
        )

    def _observation(
        self,
        view: TaskView,
        broken: RalphError | None,
        analysis: Analysis,
        judged: _Judged,
        result: AgentResult,
        checks: Checks,
    ) -> Observation:
        counted = judged.counted
        return Observation(
            gate_failures=checks.failures,
            claim_refused=checks.refused,
            all_done=view.all_done and broken is None,
            open_ids=view.open_ids,
            claimed_complete=analysis.completion_claimed,
            interrupted=result.interrupted or self.cancel.is_set(),
            iterations_run=self.counted,
            max_iterations=self.config.max_iterations,
            claim_sources=analysis.claim_sources,
            trust=self.config.completion == "trust",
            task_file_error=str(broken) if broken else None,
            needs_human=analysis.needs_human,
            blocked_streak=self.streaks.blocked,
            blocked_threshold=self.config.blocked_threshold,
            blocked_reason=analysis.blocked_reason,
            usage_limit=judged.limit.message if judged.limit else None,
            usage_action=judged.usage_action,
            usage_wait_s=judged.usage_wait_s,
            agent_fatal=judged.fatal,
            transient_error=judged.transient,
            transient_retry=self.transient_retry,
            transient_retries=self.config.backoff.attempts,
            transient_wait_s=self.config.backoff.delay(self.transient_retry) if judged.transient else 0.0,
            model_mismatch=judged.mismatch,
            model_retry=self.model_retry,
            model_retries=self.config.backoff.attempts,
            model_wait_s=self.config.backoff.delay(self.model_retry) if judged.mismatch else 0.0,
            circuit_open=self.breaker.reason if counted and self.breaker.is_open else None,
            circuit_cooldown_s=self.config.breaker.cooldown_s,
            task_failed=judged.task_failed,
            attempt=self.state.retry_count,
            max_retries=self.config.max_retries,
            budget_exceeded=self._over_budget() if counted else None,
            pause_s=self._pause(result) if counted else 0.0,
        )

    def _marks(self, task: Task, judged: _Judged, learnings: tuple[str, ...]) -> list[str]:
        """Seed 002's one-line records: [FAIL] for a failed attempt; [LEARN] lines in story mode."""
        name = f"Story {task.id}" if self.source.kind == "stories" else task.id
        marks = [f"[LEARN] {one_line(text)}" for text in learnings] if self.source.kind == "stories" else []
        if judged.task_failed:
            marks.append(
                f"[FAIL] {name} - {one_line(judged.task_failed)} - {iso(self.clock.now())} "
                f"(attempt {self.state.retry_count}/{self.config.max_retries})"
            )
        return marks

    def _task_failure(
        self, task: Task, result: AgentResult, analysis: Analysis, reading: IterationReading
    ) -> str | None:
        """Why this attempt at the task failed (seed 002: FAIL, crash, timeout, no or another DONE), or None."""
        if result.failed:
            return result.error or "the agent failed"
        if reading.failed_here:
            reasons = [failure.reason for failure in analysis.failed if failure.reason]
            return f"the agent signalled FAIL: {reasons[-1]}" if reasons else "the agent signalled FAIL"
        if self.source.marks_done:  # the DONE tag is how a story gets done: without it, the attempt failed
            if reading.mismatched_done and task.id not in analysis.done_ids:
                return f"mismatched: the agent signalled DONE {', '.join(reading.mismatched_done)}, not {task.id}"
            return "no completion signal in output"
        return None

    def _should_commit(self, decision: Decision, changed: list[str], interrupted: bool) -> bool:
        """seed 004: commit after an iteration that changed files, unless its work is being undone."""
        if not self.config.auto_commit or interrupted or decision.action is Action.RETRY or not self.git_root:
            return False
        log = os.path.relpath(self.paths.progress, self.git_root)
        return any(name != log for name in changed)

    def _auto_commit(self, task: Task, start: captures.WorkTree | None) -> str | None:
        """Commit what this iteration changed (the agent's work, and ralph's records of it: progress.txt,
        a story's status) with the task as the message; never ralph's runtime files, never the user's
        other uncommitted work. Returns the new commit."""
        message = task.title if self.source.kind in ("todo", "fix-plan") else f"{task.id}: {task.title}"
        names = self._changed(start, self._capture())
        try:
            assert self.git_root is not None
            made = git.commit_paths(self.git_root, names, one_line(message, 200))
        except OSError as exc:
            self.emit(Notice("warning", f"auto-commit failed, the changes stay uncommitted: {exc}"))
            return None
        if made:
            self.emit(Notice("info", f"committed {made[:12]}: {one_line(message, 72)}"))
        return made[:12] if made else None

    def _count_in_breaker(self, number: int, result: AgentResult, progress: bool) -> None:
        # A bare "exit code 1" says nothing about which error it was: then the output's error lines decide.
        detailed = result.failed and result.error is not None and ": " in result.error
        error = iteration_error(
            failed=result.error if detailed else None,
            tool_errors=result.tool_errors,
            # the reply's tail: errors end a reply, and a hostile reply must not cost seconds here
            text=result.final_text[-_ERROR_SCAN:],
        ) or (result.error if result.failed else None)
        facts = IterationFacts(
            iteration=number,
            progress=progress,
            failed=result.failed and not (result.timed_out and progress),
            error=error,
            fingerprint=fingerprint(error) if error else None,
            denials=result.permission_denials,
        )
        self.breaker, transition = self.breaker.after(facts, self.config.breaker, self.clock.now())
        if transition:
            self._circuit(transition)
        else:
            save_breaker(self.paths.circuit_state, self.breaker, number)
            self.status.circuit_reason = self.breaker.reason or None

    def _model_mismatch(self, result: AgentResult) -> str | None:
        want = self.config.model
        if not want or self.config.poorman or result.interrupted:
            return None
        if result.model is None:
            if not self.model_unknown_told:
                self.model_unknown_told = True
                self.emit(Notice("warning", f"cannot verify --model {want}: the agent did not report its model"))
            return None
        return None if model_matches(want, result.model) else f"got {result.model} instead of {want}"

    def _usage_answer(self, limit: UsageLimit) -> tuple[str, float]:
        """The policy's answer to a usage limit (asking the user when it says so), and how long to wait."""
        now = self.clock.now()
        if limit.resets_at is None:
            wait = self.config.usage_fallback_wait_s
        else:
            wait = max(0.0, (limit.resets_at - now).total_seconds()) + self.config.usage_margin_s
        action = self.config.usage_policy
        if action == "ask":
            action = "wait"
            if self.ask is not None:
                resets = f"resets at {iso(limit.resets_at)}" if limit.resets_at else "no reset time given"
                answer = self.ask(f"Usage limit reached ({limit.message}; {resets}). Wait or exit?", ASK_TIMEOUT_S)
                action = "exit" if answer == "exit" else "wait"
        return action, wait

    def _pause(self, result: AgentResult) -> float:
        """Near the limit (`usage_limit.pause_at`): seconds to pause until that window resets."""
        warning, pause_at = result.limit_warning, self.config.usage_pause_at
        if warning is None or pause_at is None or warning.utilization < pause_at or warning.resets_at is None:
            return 0.0
        left = (warning.resets_at - self.clock.now()).total_seconds()
        return max(0.0, left) + self.config.usage_margin_s if left > 0 else 0.0

    def _record_guards(self, result: AgentResult, limit: UsageLimit | None, action: str) -> None:
        if limit:
            self.status.usage_limit = {
                "message": limit.message,
                "vendor": limit.vendor,
                "kind": limit.kind,
                "resetsAt": iso(limit.resets_at) if limit.resets_at else None,
                "policy": action,
                "at": iso(self.clock.now()),
            }
        if result.model:
            self.status.model = result.model
        self.status.cost_usd, self.status.tokens = self.spent.cost_usd, self.spent.tokens
        self.status.retry_count = self.state.retry_count

    def _retry(
        self,
        start: captures.WorkTree | None,
        end: captures.WorkTree | None,
        number: int,
        task: Task,
        view: TaskView,
        notes: list[str],
    ) -> TaskView:
        """Undo the failed attempt; the task file is then read again, since the undo put it back too (a
        story the attempt marked done is open again, and is the one to retry)."""
        notes.append(self._undo_attempt(start, end, number, task))
        return self._reread(view, notes)[0]

    def _undo_attempt(
        self, start: captures.WorkTree | None, end: captures.WorkTree | None, number: int, task: Task
    ) -> str:
        """Save the failed attempt (a git ref and a patch), then put the workspace back as it was at its start."""
        if start is None or end is None or self.scratch_index is None:
            return "not a git repository: the failed attempt's changes stay in place for the retry"
        if start.tree == end.tree and start.head == end.head:
            return "the failed attempt changed no file; nothing to undo"
        feature = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in self.paths.name)
        ref = f"refs/ralph/attempts/{feature}/iteration-{number}"
        patch = os.path.join(self.paths.logs, f"iteration-{number}.patch")
        progress = _read_bytes(self.paths.progress)
        try:
            saved = captures.save_attempt(
                self.paths.project_root,
                start,
                end,
                ref,
                f"ralph: failed attempt at {task.id} (iteration {number})",
                patch,
            )
            captures.restore(self.paths.project_root, start, self.scratch_index)
        except OSError as exc:
            self.emit(Notice("warning", f"could not undo the failed attempt of iteration {number}: {exc}"))
            return f"could not undo the failed attempt ({exc}); the retry starts on top of its changes"
        if progress is not None and _read_bytes(self.paths.progress) != progress:
            atomic_write_bytes(self.paths.progress, progress)  # the log is append-only: keep what the agent wrote
        where = f"{ref} (commit {saved.commit[:12]})" + (
            f" and {display_path(saved.patch, self.paths.project_root)}" if saved.patch else ""
        )
        return (
            f"failed attempt saved as {where}, then undone: the workspace is back as it was before iteration {number}"
        )

    def _capture(self) -> captures.WorkTree | None:
        if self.scratch_index is None:
            return None
        return captures.capture(self.paths.project_root, self.scratch_index)

    def _changed(self, start: captures.WorkTree | None, end: captures.WorkTree | None) -> list[str]:
        if self.git_root is None or start is None or end is None:
            return []
        names = captures.changed_between(self.paths.project_root, start, end)
        return [name for name in names if not self.paths.is_runtime(os.path.join(self.git_root, name))]

    def _made_progress(
        self,
        task: Task,
        start: captures.WorkTree | None,
        end: captures.WorkTree | None,
        changed: list[str],
        before: TaskView,
        after: TaskView,
    ) -> bool:
        """Progress by files, commits or tasks. In goal mode a planning or reflecting iteration makes progress
        by its steps only: files a background hook wrote meanwhile must not keep an idle goal loop alive."""
        if self.goal is not None and task.id == goals.GOAL_TASK_ID:
            return False
        return self._progress(start, end, changed, before, after)

    def _progress(
        self,
        start: captures.WorkTree | None,
        end: captures.WorkTree | None,
        changed: list[str],
        before: TaskView,
        after: TaskView,
    ) -> bool:
        """New commits, changed content (untracked files included) or changed task state. The progress
        log alone is not progress: an agent that only writes "still working" there is not working."""
        if before.done_ids != after.done_ids:
            return True
        if start is not None and end is not None and start.head != end.head:
            return True
        log = os.path.relpath(self.paths.progress, self.git_root) if self.git_root else None
        return any(name != log for name in changed)

    def _record_analysis(
        self, number: int, analysis: Analysis, reading: IterationReading, decision: Decision, interrupted: bool
    ) -> None:
        """.response_analysis, .exit_signals and the analysis fields of status.json."""
        now = iso(self.clock.now())
        write_response_analysis(
            self.paths.response_analysis,
            number,
            now,
            analysis.to_json(),
            test_only=reading.test_only,
            question_only=reading.question_only,
            unverified_done=list(reading.unverified_done),
            refused_claim=decision.refused_claim,
            decision=decision.action.value,
            exit_reason=decision.reason.value if decision.reason else None,
        )
        if not interrupted:
            self.exit_signals.record(
                number,
                test_only_loops=reading.test_only,
                done_signals=analysis.completion_claimed,
                completion_indicators=bool(analysis.heuristics.completion_phrases or analysis.heuristics.nothing_to_do),
                blocked_loops=analysis.blocked,
                question_loops=reading.question_only,
            )
        if decision.refused_claim:
            self.exit_signals.refuse(number, decision.refused_claim, now)
        self.exit_signals.save(self.paths.exit_signals)
        self.status.last_signals = list(analysis.signals)
        self.status.confidence = analysis.confidence
        self.status.refused_claim = decision.refused_claim
        self.status.blocked_reason = analysis.blocked_reason if analysis.blocked else None
        self.status.blocked_loops = self.streaks.blocked
        self.status.test_only_loops = self.streaks.test_only
        self.status.question_loops = self.streaks.question_only

    def _prompt(self, number: int, task: Task) -> str:
        root = self.paths.project_root
        parts = PromptParts(
            iteration=number,
            feature=self.paths.name,
            feature_dir=os.path.relpath(self.paths.dir, root),
            prd=os.path.relpath(self.source.path, root),
            progress=os.path.relpath(self.paths.progress, root),
            progress_file=self.paths.progress,
            task_id=task.id,
            task_section=self.source.describe(task),
            notes=tuple(self.state.next_prompt_notes),
        )
        return build_prompt(self.config.template, parts, self.config.progress_bytes)

    def preview(self) -> tuple[str, AgentCommand]:
        """The next iteration's prompt and agent command, without starting or writing anything."""
        task = self.source.load().next_task
        if task is None:
            raise RalphError("nothing to preview: every task is done")
        number = self.state.iteration + 1
        prompt = self._prompt(number, task)
        return prompt, self.agent.command(self._request(prompt, number, task))

    def _request(self, prompt: str, number: int, task: Task) -> AgentRequest:
        return AgentRequest(
            prompt=prompt,
            iteration=number,
            project_root=self.paths.project_root,
            feature_dir=self.paths.dir,
            prompt_file=self.paths.iteration_prompt(number),
            task_id=task.id,
            started_at=self.clock.now(),
            model=self.config.model,
            resume_session=self.state.session_id or None,
        )

    def _run_agent(self, prompt: str, number: int, task: Task, log_path: str) -> AgentResult:
        request = self._request(prompt, number, task)
        result = self._run_once(request, log_path)
        if result.error_kind is ErrorKind.RESUME and request.resume_session:
            # The session is gone (expired, another machine): forget it and run this iteration fresh, once.
            self.emit(Notice("warning", f"{result.error}; running this iteration in a fresh session"))
            self.state.session_id = ""
            with open(log_path, "ab") as log:
                log.write(b"\n[ralph: the session to resume is gone; running again in a fresh session]\n")
            result = self._run_once(replace(request, resume_session=None), log_path)
        if result.session_id:
            self.state.session_id = self.status.session_id = result.session_id
        return result

    def _run_once(self, request: AgentRequest, log_path: str) -> AgentResult:
        command = self.agent.command(request)
        parser = self.agent.parser(request)
        shown: str | None = None

        def on_stdout(data: bytes) -> None:
            nonlocal shown
            parser.feed(data)
            doing = parser.activity()
            if doing != shown:
                shown = doing
                if doing:
                    self.emit(AgentActivity(doing))
                self._show_activity(doing)

        outcome = run_agent_process(
            command,
            cwd=self.paths.project_root,
            log_path=log_path,
            limits=self.config.limits,
            cancel=self.cancel,
            on_stdout=on_stdout,
            on_output=lambda stream, data: self.emit(AgentOutput(stream, data)),
        )
        self.status.activity = None
        return parser.finish(outcome)

    def _show_activity(self, doing: str | None) -> None:
        """status.json's `activity`, rewritten at most once a second (an agent can use tools fast)."""
        self.status.activity = doing
        now = self.clock.monotonic()
        if now - self.activity_written >= 1.0:
            self.activity_written = now
            self.status.write(self.clock.now())

    def _metrics(self, number: int, task: Task, status: str, result: AgentResult, files: int) -> dict[str, Any]:
        """Append this iteration's line to ralph_metrics.jsonl (seed 004's schema, plus cost and outcome)."""
        line = metrics_line(
            iteration=number,
            timestamp=iso(self.clock.now()),
            task_id=task.id,
            outcome=status,
            agent=self.agent.name,
            result=result,
            files_changed=files,
        )
        append_metrics(self.paths.metrics, line)
        return line

    def _set_counts(self, view: TaskView) -> None:
        self.status.stories_complete, self.status.stories_total = view.done_count, view.total


def _completed(before: list[str], view: TaskView) -> list[str]:
    """The completed ids to keep in state.json: those the view shows done, and earlier ones it does not
    show at all (a run narrowed with -s or --resume-from sees only part of the tasks)."""
    return sorted((set(before) - set(view.open_ids)) | view.done_ids)


def _says_done(task: Task, result: AgentResult, analysis: Analysis) -> bool:
    """The agent ended cleanly and signalled DONE for exactly this task (seed 002; a bare legacy
    [DONE] counts when no <ralph> tag names a task), and not FAIL."""
    if result.failed or result.usage_limit is not None or result.error_kind is not None:
        return False
    if analysis.failed or analysis.legacy == "fail":
        return False
    if analysis.done_ids:
        return task.id in analysis.done_ids
    return analysis.legacy == "done"


def _ran_clean(result: AgentResult) -> bool:
    """The agent ran to its end: its reply is worth reading for results (not failed, limited or cut off)."""
    return not result.failed and result.usage_limit is None and result.error_kind is None and not result.interrupted


def _tail(run: CommandRun, lines: int) -> str:
    return "\n".join(run.tail.splitlines()[-lines:])


def _append_log(path: str, text: str) -> None:
    """A note of ralph's at the end of an iteration's log (what its checks said)."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"\n[ralph: {text}]\n")
    except OSError:
        pass  # the same text is in progress.txt and the next prompt


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None
