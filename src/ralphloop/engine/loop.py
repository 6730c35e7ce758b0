"""One `ralph run`: iterations of a fresh agent process until the task source says done.

Per iteration: re-read tasks → snapshot git → build the prompt → run the agent (one
process, streamed log, timeout) → re-read tasks → decide → record. The engine never
prints: it emits events (events.py) and writes its records atomically.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ralphloop import git
from ralphloop.analysis.signals import Analysis, analyze, with_records
from ralphloop.archive import archive_copy
from ralphloop.cancel import CancelToken
from ralphloop.durations import format_duration
from ralphloop.engine.decide import Action, Decision, Observation, Streaks, decide
from ralphloop.engine.reading import IterationReading, iteration_notes, next_prompt_notes, read_iteration
from ralphloop.errors import RalphError
from ralphloop.events import AgentOutput, IterationFinished, IterationStarted, LoopEnded, Notice, RunStarted
from ralphloop.exitcodes import ExitReason
from ralphloop.paths import FeaturePaths
from ralphloop.process import ProcessLimits, run_agent_process
from ralphloop.prompt import PromptParts, build_prompt
from ralphloop.protocols import (
    Agent,
    AgentCommand,
    AgentRequest,
    AgentResult,
    Clock,
    EventSink,
    Task,
    TaskSource,
    TaskView,
    iso,
)
from ralphloop.records import signal_log
from ralphloop.records.exit_signals import ExitSignals, write_response_analysis
from ralphloop.records.progress import ProgressEntry, append_entry, ensure_header
from ralphloop.records.status import LiveStatus
from ralphloop.state.runstate import LastOutcome, RunState


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


@dataclass(frozen=True, slots=True)
class LoopOutcome:
    reason: ExitReason
    message: str
    iterations: int
    duration_s: float
    archived_to: str | None = None


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
    ) -> None:
        self.paths = paths
        self.source = source
        self.agent = agent
        self.config = config
        self.clock = clock
        self.emit = sink
        self.cancel = cancel
        self.state = RunState.load(paths.state, paths.logs)
        if self.state.last_exit_reason == ExitReason.BLOCKED.value:
            self.state.streaks.pop("blocked", None)  # the user has been told; a new run starts the count afresh
        self.streaks = Streaks.from_counts(self.state.streaks)
        self.exit_signals = ExitSignals.load(paths.exit_signals)
        self.git_root = git.toplevel(paths.project_root)
        self.status = LiveStatus(
            path=paths.status,
            feature=paths.name,
            feature_dir=paths.dir,
            agent=agent.name,
            max_iterations=config.max_iterations,
            api_calls_limit=config.rate_limit_per_hour,
            started_at=clock.now(),
        )

    # ------------------------------------------------------------------ the run

    def run(self) -> LoopOutcome:
        """Iterate until complete, halted or interrupted; records are final when this returns."""
        started = self.clock.monotonic()
        view = self.source.load()
        os.makedirs(self.paths.logs, exist_ok=True)
        ensure_header(self.paths.progress, self.paths.name, iso(self.clock.now()))
        self._set_counts(view)
        self.status.status = "running"
        self.status.total_iterations = self.state.iteration
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
            )
        )
        iterations = 0
        decision = Decision(Action.CONTINUE)
        try:
            if view.all_done:
                decision = Decision(Action.COMPLETE, ExitReason.COMPLETE, "every task already passes")
            elif self.config.max_iterations == 0:
                decision = Decision(Action.HALT, ExitReason.MAX_ITERATIONS, "no iterations allowed")
            while decision.action is Action.CONTINUE:
                if self.cancel.is_set():
                    decision = Decision(Action.HALT, ExitReason.INTERRUPTED, "interrupted")
                    break
                assert view.next_task is not None
                iterations += 1
                view, decision = self._iteration(iterations, view)
        except RalphError as exc:
            decision = Decision(Action.HALT, ExitReason.ERROR, str(exc))
        assert decision.reason is not None
        return self._finish(decision, iterations, started)

    def _finish(self, decision: Decision, iterations: int, started: float) -> LoopOutcome:
        assert decision.reason is not None
        now = self.clock.now()
        self.status.status = decision.reason.status
        self.status.exit_reason = decision.reason.value
        self.status.exit_message = decision.message
        self.status.write(now)
        self.state.last_exit_reason = decision.reason.value
        self.state.updated_at = iso(now)
        self.state.save(self.paths.state)
        archived = None
        if decision.reason is ExitReason.COMPLETE and self.config.archive and iterations > 0:
            try:
                archived = archive_copy(self.paths, now)
            except OSError as exc:  # the work is done and recorded; a failed copy must not hide that
                self.emit(Notice("warning", f"could not archive {self.paths.display()}: {exc}"))
        outcome = LoopOutcome(decision.reason, decision.message, iterations, self.clock.monotonic() - started, archived)
        self.emit(
            LoopEnded(
                reason=outcome.reason,
                message=outcome.message,
                iterations=iterations,
                duration_s=outcome.duration_s,
                done=self.status.stories_complete,
                total=self.status.stories_total,
                archived_to=archived,
            )
        )
        return outcome

    # ------------------------------------------------------------------ one iteration

    def _iteration(self, iteration: int, view: TaskView) -> tuple[TaskView, Decision]:
        began = self.clock.monotonic()
        task = view.next_task
        assert task is not None
        number = self.state.iteration + 1
        before = git.snapshot(self.paths.project_root, self.git_root) if self.git_root else None
        prompt = self._prompt(number, task)
        prompt_file = self.paths.iteration_prompt(number)
        with open(prompt_file, "w", encoding="utf-8") as handle:
            handle.write(prompt)
        log_path = self.paths.iteration_log(number)
        signals_offset = signal_log.size(self.paths.signals)

        self.state.retry_count = self.state.retry_count + 1 if self.state.current_task == task.id else 0
        self.state.iteration, self.state.current_task = number, task.id
        self.state.updated_at = iso(self.clock.now())
        self.state.save(self.paths.state)  # before the agent starts: a crash never reuses this number
        self.status.iteration, self.status.total_iterations = iteration, number
        self.status.current_story, self.status.log_file = f"{task.id} - {task.title}", log_path
        self.status.record_call(self.clock.now())
        self.status.write(self.clock.now())
        self.emit(IterationStarted(iteration, number, self.config.max_iterations, task.id, task.title, log_path))

        result = self._run_agent(prompt, number, task, log_path)

        notes = [f"agent failed: {result.error}"] if result.error and not result.interrupted else []
        broken: RalphError | None = None
        try:
            after_view = self.source.load()
        except RalphError as exc:  # the agent left the task file invalid: record it, then stop
            broken, after_view = exc, view
            notes.append(f"task file invalid after this iteration: {exc}")
        after = git.snapshot(self.paths.project_root, self.git_root) if self.git_root else None
        changed = self._files_changed(before, after)
        commit = after.head[:12] if after and after.head and (before is None or after.head != before.head) else None
        interrupted = result.interrupted or self.cancel.is_set()

        new = signal_log.read_new(self.paths.signals, signals_offset, number)
        analysis = with_records(analyze(result.final_text, prompt), new.records)
        notes += new.problems
        reading = read_iteration(analysis, task, after_view, changed, view_valid=broken is None)
        self.streaks = streaks = self.streaks.after(  # an interrupted iteration leaves the counts alone
            counted=not interrupted,
            blocked=analysis.blocked,
            test_only=reading.test_only,
            question_only=reading.question_only,
        )
        decision = decide(
            Observation(
                all_done=after_view.all_done and broken is None,
                open_ids=after_view.open_ids,
                claimed_complete=analysis.completion_claimed,
                interrupted=interrupted,
                iterations_run=iteration,
                max_iterations=self.config.max_iterations,
                claim_sources=analysis.claim_sources,
                trust=self.config.completion == "trust",
                task_file_error=str(broken) if broken else None,
                needs_human=analysis.needs_human,
                blocked_streak=streaks.blocked,
                blocked_threshold=self.config.blocked_threshold,
                blocked_reason=analysis.blocked_reason,
            )
        )
        notes += iteration_notes(analysis, reading, streaks, decision.refused_claim, self.config.blocked_threshold)
        passed = task.id in after_view.done_ids and broken is None
        status = (
            "interrupted"
            if result.interrupted
            else "complete"
            if passed
            else "failed"
            if result.failed or reading.failed_here
            else "blocked"
            if analysis.blocked
            else "in-progress"
        )
        self.state.next_prompt_notes = next_prompt_notes(analysis, reading, decision, self.config.blocked_threshold)
        self._record_analysis(number, analysis, reading, decision, interrupted)

        signals = [f"signals: {', '.join(analysis.signals)}"] if analysis.signals else []
        self._record(number, task, status, result, changed, commit, signals + notes, after_view, analysis.learnings)
        self.emit(
            IterationFinished(
                iteration=iteration,
                number=number,
                task_id=task.id,
                status=status,
                result=result,
                files_changed=tuple(changed),
                commit=commit,
                done=after_view.done_count,
                total=after_view.total,
                notes=tuple(notes),
                wall_s=self.clock.monotonic() - began,
                signals=analysis.signals,
            )
        )
        return after_view, decision

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
        )

    def _run_agent(self, prompt: str, number: int, task: Task, log_path: str) -> AgentResult:
        request = self._request(prompt, number, task)
        command = self.agent.command(request)
        parser = self.agent.parser(request)
        outcome = run_agent_process(
            command,
            cwd=self.paths.project_root,
            log_path=log_path,
            limits=self.config.limits,
            cancel=self.cancel,
            on_stdout=parser.feed,
            on_output=lambda stream, data: self.emit(AgentOutput(stream, data)),
        )
        return parser.finish(outcome)

    def _files_changed(self, before: git.Snapshot | None, after: git.Snapshot | None) -> list[str]:
        if self.git_root is None:
            return []
        names = git.changed_files(self.paths.project_root, before, after)
        return [name for name in names if not self.paths.is_runtime(os.path.join(self.git_root, name))]

    def _record(
        self,
        number: int,
        task: Task,
        status: str,
        result: AgentResult,
        changed: list[str],
        commit: str | None,
        notes: list[str],
        view: TaskView,
        learnings: tuple[str, ...] = (),
    ) -> None:
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
                learnings=learnings,
                commit=commit,
                agent=agent_line,
                notes=notes,
            ),
        )
        self.state.completed_ids = sorted(view.done_ids)
        if status == "complete":
            self.state.retry_count = 0
        self.state.streaks = self.streaks.counts()
        self.state.last_outcome = LastOutcome(number, task.id, status, result.exit_code, result.error, now)
        self.state.updated_at = now
        self.state.save(self.paths.state)
        self._set_counts(view)
        self.status.last_outcome = f"iteration {number}: {status} ({task.id})"
        self.status.write(self.clock.now())

    def _set_counts(self, view: TaskView) -> None:
        self.status.stories_complete, self.status.stories_total = view.done_count, view.total
