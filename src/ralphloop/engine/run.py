"""A run, ready to go: everything the engine works with, built once (start/build.py) and never changed."""

from __future__ import annotations

from collections.abc import Callable

from msgspec import Struct

from ralphloop.config.policy import Policy
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock
from ralphloop.core.protocols import Agent, EventSink, TaskSource, iso
from ralphloop.core.runner import Runner
from ralphloop.engine.state import LoopState
from ralphloop.hooks.runner import HookContext, HookRunner
from ralphloop.project.paths import FeaturePaths
from ralphloop.records.control import ControlFile
from ralphloop.state.calls import CallLedger
from ralphloop.state.circuit import BreakerFile
from ralphloop.state.start_at import StartAt
from ralphloop.workspace.tracker import Workspace

# Asks the user a question with a timeout; returns the answer, or None when nobody answered.
Ask = Callable[[str, float], str | None]


class Run(Struct, frozen=True):
    """One `ralph run` over one feature."""

    id: str  # the run's id in every event: "<pid>@<start time>"
    paths: FeaturePaths
    source: TaskSource
    agent: Agent
    runner: Runner  # how the agent is started: a local process (processes/local.py) unless one is given
    policy: Policy
    clock: Clock
    emit: EventSink
    cancel: CancelToken
    ledger: CallLedger
    hooks: HookRunner
    breaker: BreakerFile  # the breaker's state file: its truth, read before each iteration
    workspace: Workspace | None  # None outside a git repository: no captures, no undo, no commits
    start: LoopState  # where the last run left the loop
    started: float  # monotonic: when the run began (the runtime budget counts from here)
    resume: str  # the command that runs this feature again, as the user would paste it
    ask: Ask | None = None  # the terminal, when there is someone to ask (usage limits)
    start_at: StartAt | None = None  # `--start-at`: no iteration before its instant
    control: ControlFile | None = None  # what the user asks of the running loop: pause, stop, guidance
    recovered: tuple[object, ...] = ()  # what a killed run left to record (start/recover.py), once this one started

    def runtime(self) -> float:
        """Seconds since the run began, less the wait for --start-at (what the runtime budget counts)."""
        return self.clock.monotonic() - self.started - (self.start_at.waited_s if self.start_at else 0.0)

    def now(self) -> str:
        """The time now, as every record writes it."""
        return iso(self.clock.now())

    def context(self, task_id: str, number: int, transcript: str = "") -> HookContext:
        """The hook variables of an iteration (or of the run, for pre_run and the end hooks)."""
        return self.hooks.context_for(self.source, task_id, number, transcript)
