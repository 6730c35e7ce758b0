"""The run builder: from a project root and what the user asked, a run ready to go — settings, task source,
agent, guards, record sinks and clock. `ralph run`, the tests and (later) parallel mode all build runs here.

Building reads files and checks them; it writes nothing (bad input stops here, every file as it was).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.agents.failover import FailoverAgent, account_key
from ralphloop.agents.registry import ready
from ralphloop.analysis.reading import Streaks
from ralphloop.config.policy import Policy
from ralphloop.config.settings import Settings, load_settings
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.events import Notice, Slot
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import Agent, EventSink, TaskSource, TaskView, iso
from ralphloop.core.runner import Runner
from ralphloop.engine.run import Ask, Run
from ralphloop.engine.state import LoopState
from ralphloop.hooks.runner import HookRunner
from ralphloop.plugins.detect import task_files
from ralphloop.plugins.formats import format_of
from ralphloop.processes.local import LocalRunner
from ralphloop.processes.sandbox import SandboxRunner
from ralphloop.project.paths import FeaturePaths, display_path, ralph_home
from ralphloop.project.resolve import resolve_feature
from ralphloop.records.control import ControlFile
from ralphloop.records.events import EventLog
from ralphloop.records.exit_signals import SignalRecords
from ralphloop.records.journal import JournalFile
from ralphloop.records.metrics import MetricsLog
from ralphloop.records.progress import ProgressLog
from ralphloop.records.status import StatusFile
from ralphloop.start.preflight import Assembly, assemble, template_file
from ralphloop.start.sandbox import sandbox_for, seed_home
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.state.circuit import BreakerFile
from ralphloop.state.runstate import RunState, StateFile
from ralphloop.state.start_at import StartAt
from ralphloop.tasks.problems import raise_first
from ralphloop.tasks.sources import EXAMPLE_WORDS, open_source, source_kind
from ralphloop.templates.prompt import load_template
from ralphloop.words.argv import run_flags
from ralphloop.workspace import git
from ralphloop.workspace.tracker import Workspace


class RunRequest(Struct, frozen=True):
    """What the user asked of `ralph run` (flags already parsed)."""

    target: str | None = None  # FEATURE or PLAN_DIR, as given
    feature: str | None = None  # -f/--feature
    flags: Mapping[str, tuple[Any, str]] = field(default_factory=dict)  # settings key → (value, flag label)
    story: str | None = None
    resume_from: str | None = None
    prompt: str | None = None  # -p/--prompt FILE
    archive: bool = True
    reset_circuit: bool = False
    terminal: bool = False  # someone at a terminal, who could be asked
    dry_run: bool = False  # nothing will start: an agent that is not installed is only warned about
    argv: tuple[str, ...] = ()  # the words after `ralph` as typed ("run", ...): printed commands repeat them
    start_at: str | None = None  # --start-at HH:MM|reset
    loops: bool = False  # a parallel run's loop, or its coordinator: a login its CLI refreshes cannot be shared


class Built(Struct, frozen=True):
    """A run and what `ralph run` shows or does around it."""

    run: Run
    settings: Settings
    kind: str
    view: TaskView  # the task state the run starts from
    branch: str | None  # the branch to work on (switched to under the run's lock)
    warnings: tuple[str, ...]  # about the config files, to show at once
    git_warnings: tuple[str, ...]  # uncommitted work: shown on the run's screen once it is sure to start


def build_run(
    root: str,
    request: RunRequest,
    *,
    clock: Clock,
    sinks: list[EventSink] | None = None,
    cancel: CancelToken | None = None,
    ask: Ask | None = None,
    runner: Runner | None = None,
) -> Built:
    """Everything a run needs, checked. `sinks` see every event after the record files have; the list is
    read at each event, so a sink added to it later sees the events from then on. `runner` starts the agent (its
    prompt hooks too): a local process unless another is given (core/runner.py)."""
    paths = resolve_feature(root, request.target or request.feature, flag="FEATURE" if request.target else "-f")
    kind = source_kind(paths)
    warnings: list[str] = []
    row = format_of(kind)
    files = task_files(paths.dir)
    if len(files) > 1:  # seed 000's @fix_plan.md beside a fix_plan.md, a prd.json beside a plan's TODO.md
        warnings.append(
            f"{paths.display()} holds {', '.join(files)}: ralph works {files[0]} alone (the first of them); "
            "move the others away to work one of them"
        )
    settings = load_settings(
        root,
        dict(request.flags or {}),
        warn=warnings.append,
        seed_defaults=row.defaults,
        seed_label=row.seed_source,
    )
    if settings.agent.name != "claude" and "model" in row.defaults and settings.source("model") == row.seed_source:
        # the seed's model is a Claude model (seed 004: opus): another agent is not asked for it
        sources = {key: where for key, where in settings.sources.items() if key != "model"}
        settings = replace(settings, agent=replace(settings.agent, model=None), sources=MappingProxyType(sources))
    # A killed run's iteration is settled first (start/recover.py), and its undo may be what mends a task file its
    # agent was writing when both were killed: the task file is then judged once that is done (run_loop).
    pending = os.path.lexists(paths.journal)
    # every problem `ralph validate` reports stops the run here, before any file is touched; what the check built
    # on its way (the task source and its view, the template, the branch named) is the run's, not built again
    assembled = assemble(
        paths,
        settings,
        kind,
        story=request.story,
        resume_from=request.resume_from,
        reset_circuit=request.reset_circuit,
        prompt=request.prompt,
        source=not pending,
        clock=clock,
    )
    found = assembled.problems
    if request.dry_run:  # a dry run of `ralph init`'s example shows its prompt; a run would waste a call on it
        warnings += [str(problem) for problem in found if EXAMPLE_WORDS in problem.message]
        found = [problem for problem in found if EXAMPLE_WORDS not in problem.message]
    raise_first(found, paths.command("validate"))
    source, view = _source(paths, kind, settings, request, assembled, pending)
    agent = assembled.agent
    assert agent is not None  # made, or its problem raised above
    if request.dry_run and agent.missing:
        warnings.append(f"{agent.missing} (a real run would stop here)")
    elif not request.dry_run:
        ready(agent)
    in_git, git_warnings = _git_preflight(paths, settings)
    branch = _branch(paths, settings, assembled.branch) if in_git and (view.tasks or not pending) else None
    # Unset, ralph commits for an agent that cannot (a sandbox without git, no shell under `permissions: edits`).
    fallback = row.auto_commit or not agent.commits
    auto_commit = in_git and (settings.git.auto_commit if settings.git.auto_commit is not None else fallback)
    policy = _policy(settings, _template(request, paths, kind, assembled), request, auto_commit)
    saved = RunState.load(paths.state, paths.logs)
    # seed 002: state.json's completed list, rebuilt from the task source (and progress.txt) when lost; a
    # narrowed run sees only part of the tasks and keeps the others it does not show
    saved.completed_ids = sorted((set(saved.completed_ids) - set(view.open_ids)) | view.done_ids)
    cancel = cancel or CancelToken()
    ledger = CallLedger(ledger_path(ralph_home(), settings.loop.rate_account or settings.agent.name))

    def slots() -> Slot:
        taken = ledger.peek(clock.now(), policy.loop.rate_limit_per_hour)
        return Slot(taken.used, taken.limit, taken.resets_at)

    records: list[EventSink] = [
        JournalFile(paths.journal),  # first: the whole record is kept before any record file has it
        StatusFile(
            paths.status, clock.now, clock.monotonic, slots, budget=policy.budget, pacing=_pacing(agent, policy)
        ),
        StateFile(paths.state, saved, clock.now),
        ProgressLog(paths.progress),
        MetricsLog(paths.metrics, policy.budget.max_cost_usd, dict(policy.usage.windows.shares)),
        SignalRecords(paths.response_analysis, paths.exit_signals),
        EventLog(paths.events, clock.now),
    ]
    start_at = start_at_for(request.start_at, paths.start_at, agent, lambda text: emit(Notice("info", text)))
    if start_at is not None:
        records.append(start_at)  # it clears its file when the run ends
    control = ControlFile(paths.control, since=clock.now())
    records.append(control)  # a stop asked of the last run is forgotten when this one starts
    emit = _fan_out(records, sinks if sinks is not None else [])
    workspace = Workspace.open(paths, source.path, lambda text: emit(Notice("warning", text)))
    top = workspace.top if workspace else paths.project_root
    runner = runner if runner is not None else _runner(settings, agent, top, request.dry_run, warnings, request.loops)
    run = Run(
        id=f"{os.getpid()}@{iso(clock.now())}",
        paths=paths,
        source=source,
        agent=agent,
        runner=runner,
        policy=policy,
        clock=clock,
        emit=emit,
        cancel=cancel,
        ledger=ledger,
        hooks=HookRunner(
            paths=paths,
            agent=agent,
            runner=runner,
            hooks=policy.hooks,
            gates=policy.gates,
            limits=policy.limits,
            cancel=cancel,
            emit=emit,
            model=policy.agent.model,
        ),
        breaker=BreakerFile(paths.circuit_state, paths.circuit_history, display_path(paths.circuit_state, root)),
        workspace=workspace,
        start=_carried(saved),
        started=clock.monotonic(),
        resume=resume_command(request, paths),
        ask=ask if policy.usage.action == "ask" else None,
        start_at=start_at,
        control=control,
    )
    # a damaged breaker file stopped the run in the check (--reset-circuit is what mends it)
    run.ledger.check()  # so does a damaged call ledger, or a FIFO or a link in its place or its lock's
    _wire_failover(agent, emit)
    return Built(run, settings, kind, view, branch, tuple(warnings), git_warnings)


def _source(
    paths: FeaturePaths, kind: str, settings: Settings, request: RunRequest, assembled: Assembly, pending: bool
) -> tuple[TaskSource, TaskView]:
    """The task source and its first view: the check's, else (a killed run's iteration to settle first, when the
    check left the source out) opened here; an invalid one stops the run, unless that iteration may mend it."""
    if assembled.source is not None and assembled.view is not None:
        return assembled.source, assembled.view
    source = open_source(
        paths, kind, story_order=settings.loop.story_order, story=request.story, resume_from=request.resume_from
    )
    try:
        return source, source.load()  # invalid input stops here, before any file is touched
    except RalphError:
        if not pending:
            raise
        return source, TaskView((), None)  # read again once the killed iteration is settled


def _template(request: RunRequest, paths: FeaturePaths, kind: str, assembled: Assembly) -> str:
    """The prompt template's text: the check's, else read here."""
    if assembled.template is not None:
        return assembled.template
    template, shown = template_file(request.prompt, paths, kind)
    return load_template(template, shown, kind)


def _wire_failover(agent: object, emit: EventSink) -> None:
    """A failover chain's book of limits checked like the call ledger, and its warnings (a book it cannot read
    or write mid-run) sent to the records."""
    if isinstance(agent, FailoverAgent):
        agent.book.check()
        agent.warn = lambda text: emit(Notice("warning", text))
        agent.tell = lambda text: emit(Notice("info", text))


def _pacing(agent: object, policy: Policy) -> dict[str, Any] | None:
    """The run's agent accounts and its caps on their usage windows, for status.json (state/usage_windows.py)."""
    if not isinstance(agent, FailoverAgent):
        return None  # an agent with no account reports no windows
    accounts = [{"agent": member.name, "account": account_key(member)} for member in agent.agents]
    return {"accounts": accounts, "caps": dict(policy.usage.windows.shares)}


def start_at_for(spec: str | None, path: str, agent: object, tell: Callable[[str], None]) -> StartAt | None:
    """`--start-at`: the instant decided when the loop first asks (a reset, from the failover chain's book)."""
    if spec is None:
        return None
    next_reset = agent.next_reset if isinstance(agent, FailoverAgent) else lambda now: None
    return StartAt(spec, path, next_reset, tell)


def _runner(settings: Settings, agent: Agent, top: str, dry_run: bool, warnings: list[str], loops: bool) -> Runner:
    """How the agent is started: in the sandbox `settings.sandbox` asks for (start/sandbox.py), else as a local
    process; a dry run builds the box to show it, and writes nothing."""
    box = sandbox_for(settings.sandbox, agent, top, warnings.append, loops=loops)
    if box is None:
        return LocalRunner()
    if not dry_run:
        seed_home(box, agent.sandbox)
    return SandboxRunner(box)


def _carried(saved: RunState) -> LoopState:
    """Where the last run left the loop. A human who stepped in after a stop starts the counts afresh: the
    blocked streak after a BLOCKED stop, the task's attempts after retries ran out."""
    streaks = Streaks.from_counts(saved.streaks)
    if saved.last_exit_reason == ExitReason.BLOCKED.value:
        streaks = replace(streaks, blocked=0)
    retries = 0 if saved.last_exit_reason == ExitReason.RETRIES_EXHAUSTED.value else saved.retry_count
    return LoopState(
        number=saved.iteration,
        task=saved.current_task,
        retries=retries,
        streaks=streaks,
        notes=tuple(saved.next_prompt_notes),
        session=saved.session_id,
    )


def _fan_out(records: list[EventSink], others: list[EventSink]) -> EventSink:
    """One sink for the engine: the record files first (a view that reads them sees the event's effect),
    then the others (the screen, a log file)."""

    def emit(event: object) -> None:
        for sink in records:
            sink(event)
        for sink in list(others):
            sink(event)

    return emit


def resume_command(request: RunRequest, paths: FeaturePaths) -> str:
    """`ralph run` for this feature with the user's own flags (the same agent, the same limits), the workspace
    named so that it is found from anywhere in the project (FeaturePaths.flag): it works when pasted."""
    command = shlex.join(["ralph", "run", *run_flags(request.argv, request.target)])
    return f"{command} {paths.flag}" if paths.flag else command


def _policy(settings: Settings, template: str, request: RunRequest, auto_commit: bool) -> Policy:
    return Policy(
        loop=settings.loop,
        agent=settings.agent,
        limits=settings.process,
        template=template,
        archive=request.archive,
        breaker=settings.breaker,
        usage=settings.usage.at(request.terminal),
        budget=settings.budget,
        backoff=settings.backoff,
        reset_circuit="requested with ralph run --reset-circuit" if request.reset_circuit else None,
        auto_commit=auto_commit,
        hooks=settings.hooks,
        gates=settings.quality_checks,
        questions=settings.questions,
    )


def _git_preflight(paths: FeaturePaths, settings: Settings) -> tuple[bool, tuple[str, ...]]:
    """Seed 004's checks before the first iteration: whether the loop works in a git repository, and
    the warnings to show (uncommitted or untracked files). An error stops the run here."""
    if not settings.git.require:
        return git.toplevel(paths.project_root) is not None, ()
    found = git.preflight(paths.project_root, runtime_paths(paths))
    if found.error:
        raise RalphError(found.error)
    return True, found.warnings


def runtime_paths(paths: FeaturePaths) -> tuple[str, ...]:
    """ralph's runtime files as paths in the repository (for the dirty check)."""
    from ralphloop.project.paths import RUNTIME_NAMES

    top = git.toplevel(paths.project_root) or paths.project_root
    rel = os.path.relpath(paths.state_dir, top)
    prefix = "" if rel == "." else rel + "/"
    return tuple(f"{prefix}{name}" for name in RUNTIME_NAMES)


def _branch(paths: FeaturePaths, settings: Settings, named: tuple[str, str, int] | None) -> str | None:
    """The branch to work on (seed 003): the one the task file names (prd.json's branchName), or with
    branch.auto_create the prefix and the feature's name; None to stay where the user is."""
    if settings.git.branch_auto_create is False:
        return None
    wanted = named[0] if named else ""
    if not wanted and settings.git.branch_auto_create:
        wanted = settings.git.branch_prefix + paths.name
    return wanted or None  # its name is valid: the check (start/preflight.py) said so
