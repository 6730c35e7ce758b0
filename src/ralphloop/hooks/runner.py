"""The loop's side of hooks and quality gates: which to run when, with which variables, and where
their output goes. Running a command is run.py's; what the results mean is the loop's.

- lifecycle hooks (config `hooks:`): pre_run, pre_iteration, post_iteration, on_complete, on_error,
  on_halt; a failure is a warning, except post_iteration's exit 75, "verification failed";
- quality gates (config `quality_checks:`): run after an iteration that claims a task or completion;
- per-iteration hooks (goal mode, SPRINT.yaml): `parallel: false` ones run in order before the next
  iteration, `parallel: true` ones in the background; each run is a hook-tasks record.

Every command gets the variables as environment variables (variables.HookVars) and runs in the project
root with its own process group, timeout and log under logs/hooks/.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable, Hashable, Mapping

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.core.cancel import CancelToken
from ralphloop.core.errors import RalphError
from ralphloop.core.events import Notice
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.hook_spec import CommandSpec, HookEnd, HookSpec, LifecycleHooks, safe_name
from ralphloop.core.protocols import Agent, AgentRequest, EventSink, TaskSource
from ralphloop.core.runner import ProcessLimits, Runner
from ralphloop.hooks.background import Background
from ralphloop.hooks.gates import GateVerdict, run_gates
from ralphloop.hooks.run import CommandRun, run_command, run_shell
from ralphloop.hooks.variables import HookVars, substitute
from ralphloop.project.paths import FeaturePaths
from ralphloop.words.textsafe import one_line


class HookContext(Struct, frozen=True):
    """The variables of one iteration (or of the run, for pre_run and the end hooks)."""

    number: int
    task_id: str
    transcript: str
    sprint_id: str
    phase_id: str

    def variables(self) -> HookVars:
        """The values its hooks can refer to."""
        return HookVars(self.transcript, self.sprint_id, self.number, self.phase_id)


class HookRunner:
    """Runs one loop's hooks and gates; `stop()` before the run's records are final."""

    def __init__(
        self,
        *,
        paths: FeaturePaths,
        agent: Agent,
        runner: Runner,
        hooks: LifecycleHooks,
        gates: tuple[CommandSpec, ...],
        limits: ProcessLimits,
        cancel: CancelToken,
        emit: EventSink,
        model: str | None = None,
    ) -> None:
        self.paths = paths
        self.agent = agent
        self.runner = runner  # a prompt hook runs the agent as the loop does
        self.hooks = hooks
        self.gates = gates
        self.limits = replace(limits, timeout_s=hooks.timeout_s) if hooks.timeout_s else limits
        self.gate_limits = limits
        self.cancel = cancel
        self.emit = emit
        self.model = model
        self.background = Background()
        # The end hooks of an interrupted run (see end_of_run): a token nothing sets.
        self.end_cancel = CancelToken()
        self.folder = os.path.join(paths.logs, "hooks")

    def _env(self, context: HookContext, event: str) -> dict[str, str]:
        return {
            **context.variables().values(),
            "RALPH_EVENT": event,
            "RALPH_ITERATION": str(context.number),
            "RALPH_FEATURE": self.paths.name,
            "RALPH_FEATURE_DIR": self.paths.dir,
            "RALPH_TASK_ID": context.task_id,
        }

    def _log(self, name: str, number: int) -> str:
        os.makedirs(self.folder, exist_ok=True)
        return os.path.join(self.folder, f"{safe_name(name)}-{number}.log")

    # -------------------------------------------------------------- lifecycle hooks

    def lifecycle(
        self,
        event: str,
        context: HookContext,
        extra: Mapping[str, str] | None = None,
        cancel: CancelToken | None = None,
    ) -> list[CommandRun]:
        """Run `event`'s commands in order, each stopped by `cancel` (the run's Ctrl+C token unless told), none
        started once it is set; each result is told as a notice (a failure as a warning)."""
        token = cancel or self.cancel
        runs = []
        for spec in self.hooks.for_event(event):
            if token.is_set():
                break
            run = run_shell(
                spec,
                cwd=self.paths.project_root,
                env={**self._env(context, event), **(extra or {})},
                log_path=self._log(spec.name, context.number),
                limits=self.limits,
                cancel=token,
            )
            runs.append(run)
            self.tell(f"hook {run.summary()}", run.ok)
        return runs

    # -------------------------------------------------------------- quality gates

    def run_gates(self, context: HookContext) -> GateVerdict:
        if not self.gates:
            return GateVerdict()
        runs = run_gates(
            self.gates,
            cwd=self.paths.project_root,
            env=self._env(context, "quality_check"),
            logs_dir=self.folder,
            iteration=context.number,
            limits=self.gate_limits,
            cancel=self.cancel,
        )
        for run in runs:
            self.tell(f"quality gate {run.summary()}", run.ok)
        return GateVerdict(runs)

    # -------------------------------------------------------------- per-iteration hooks

    def per_iteration(
        self,
        hooks: tuple[HookSpec, ...],
        context: HookContext,
        record: Callable[[HookSpec, CommandRun | None], None],
    ) -> None:
        """Sequential hooks now, in order; parallel ones started in the background. `record(hook, None)`
        is called when a hook starts, `record(hook, run)` when it ends (for the background ones, from
        `collect()` or `stop()`, on the loop's thread)."""
        for hook in hooks:
            if not hook.enabled or self.cancel.is_set():
                continue
            record(hook, None)
            try:
                job = self._job(hook, context)
            except OSError as exc:  # its prompt file cannot be written: a failed run, never a stopped loop
                record(hook, CommandRun(hook.id, None, 0.0, "", start_error=f"cannot start: {exc}"))
                continue
            if hook.parallel:
                self.background.start((hook.id, context.number), job)
            else:
                record(hook, job(self.cancel))

    def _job(self, hook: HookSpec, context: HookContext) -> Callable[[CancelToken], CommandRun]:
        env = self._env(context, "per_iteration")
        log = self._log(f"{hook.id}", context.number)
        name = f"{hook.id} (iteration {context.number})"
        if hook.kind == "command":
            spec = CommandSpec(name, hook.body)
            return lambda cancel: run_shell(
                spec, cwd=self.paths.project_root, env=env, log_path=log, limits=self.limits, cancel=cancel
            )
        # a prompt hook: the agent, with the prompt's variables filled in (it is text, never a shell's)
        prompt = substitute(hook.body, context.variables().values())
        prompt_file = log[: -len(".log")] + ".prompt.md"
        with open(prompt_file, "w", encoding="utf-8") as handle:
            handle.write(prompt)
        request = AgentRequest(
            prompt=prompt,
            iteration=context.number,
            project_root=self.paths.project_root,
            feature_dir=self.paths.dir,
            prompt_file=prompt_file,
            task_id=context.task_id,
            model=self.model,
            home=self.runner.home,  # in the run's sandbox, as the loop's agent is
        )
        command = self.agent.command(request)
        command = replace(command, env={**command.env, **env})
        return lambda cancel: run_command(
            name,
            command,
            cwd=self.paths.project_root,
            log_path=log,
            limits=self.limits,
            cancel=cancel,
            runner=self.runner,
        )

    def collect(self) -> list[tuple[Hashable, CommandRun]]:
        """Background hooks that ended since the last look."""
        return self.background.collect()

    @property
    def running(self) -> int:
        """How many background hooks are still running."""
        return self.background.running

    def stop(self, *, cancel: bool) -> list[tuple[Hashable, CommandRun]]:
        """Wait for the background hooks (or stop them, when the run was interrupted)."""
        if self.background.running:
            what = "stopping" if cancel else "waiting for"
            self.emit(Notice("info", f"{what} {self.background.running} background hook(s)"))
        finished: list[tuple[Hashable, CommandRun]] = []
        while not cancel and self.background.running:  # a Ctrl+C while waiting stops them
            if self.cancel.is_set():
                cancel = True
                break
            select.select([self.cancel.fileno()], [], [], 0.1)
            self.cancel.quiet()
            finished += self.background.collect()
        return finished + self.background.stop(cancel=cancel)

    def context_for(self, source: TaskSource, task_id: str, number: int, transcript: str = "") -> HookContext:
        """The hook variables: the feature and the task, or a goal's sprint and phase; the transcript is the
        iteration's log (for the run's hooks: the last iteration's log, when there was one)."""
        sprint_id, phase = self.paths.name, task_id
        try:
            scope = source.hook_scope(task_id)
        except RalphError:  # a damaged goal file stops the loop elsewhere; the hooks still get the feature
            scope = None
        if scope is not None:
            sprint_id, phase = scope
        if not transcript:
            last = self.paths.iteration_log(number)
            transcript = last if os.path.isfile(last) else ""
        return HookContext(number, task_id, transcript, sprint_id, phase)

    def format_hooks(self, source: TaskSource, context: HookContext, now: Callable[[], str]) -> None:
        """The task format's hooks after a counted iteration (goal mode's per-iteration hooks): started now,
        recorded by the format when they start and end."""
        try:
            hooks = source.iteration_hooks()
        except RalphError as exc:
            self.tell(f"per-iteration hooks skipped: {exc}", False)
            return
        if hooks:
            self.per_iteration(hooks, context, lambda hook, ran: self.record(source, context.number, hook.id, ran, now))

    def record(
        self, source: TaskSource, number: int, hook_id: str, ran: CommandRun | None, now: Callable[[], str]
    ) -> None:
        """A per-iteration hook started (`ran` None) or ended: the format records it; its end is told."""
        ended = HookEnd(ran.ok, ran.exit_code) if ran is not None else None
        warning = source.record_hook(number, hook_id, ended, now())
        if warning:
            self.tell(warning, False)
        if ran is not None:
            self.tell(f"per-iteration hook {ran.summary()}", ran.ok)

    def recorded(self, source: TaskSource, finished: list[tuple[Hashable, CommandRun]], now: Callable[[], str]) -> None:
        """Background hooks that ended (from `collect` or `stop`), recorded by the format."""
        for key, ran in finished:
            assert isinstance(key, tuple)
            hook_id, number = key
            self.record(source, number, hook_id, ran, now)

    def end_of_run(self, reason: ExitReason, message: str, context: HookContext) -> bool:
        """on_complete, on_error or on_halt, once the records are final; told why through the environment.
        True when a Ctrl+C stopped them (or came before they could start): the run ends interrupted."""
        if reason in (ExitReason.COMPLETE, ExitReason.STORY_DONE):
            event = "on_complete"
        elif reason in (ExitReason.ERROR, ExitReason.AGENT_ERROR):
            event = "on_error"
        else:
            event = "on_halt"
        extra = {
            "RALPH_EXIT_REASON": reason.value,
            "RALPH_EXIT_CODE": str(reason.exit_code),
            "RALPH_EXIT_MESSAGE": one_line(message, 1000),
        }
        # After a Ctrl+C they still run (they are what tells the user the run stopped), on a token of their own:
        # the next Ctrl+C quits at once. Otherwise the first one stops them, as it stops any other hook.
        interrupted = reason is ExitReason.INTERRUPTED
        self.lifecycle(event, context, extra, cancel=self.end_cancel if interrupted else None)
        return not interrupted and self.cancel.is_set() and bool(self.hooks.for_event(event))

    def tell(self, message: str, ok: bool) -> None:
        """Tell `message` as a notice: info when `ok`, else a warning."""
        self.emit(Notice("info" if ok else "warning", message))

    def close(self) -> None:
        """Release the end hooks' cancel token; after `stop()`."""
        self.end_cancel.close()
