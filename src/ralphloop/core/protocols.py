"""The seams of the engine: agents, task sources and event sinks, and the values they exchange (clocks:
core/clock.py)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Protocol

from msgspec import Struct

from ralphloop.core.hook_spec import HookEnd, HookSpec
from ralphloop.core.limits import LimitWarning, UsageLimit, UsageWindow
from ralphloop.core.problems import Problem
from ralphloop.core.sandbox import SandboxNeeds

# ---------------------------------------------------------------- tasks


class Task(Struct, frozen=True):
    """One unit of work the agent is asked to finish in an iteration."""

    id: str
    title: str
    done: bool
    priority: int = 0
    description: str = ""
    acceptance_criteria: tuple[str, ...] = ()
    notes: str = ""
    depends_on: tuple[str, ...] = ()  # ids that must be done before this task may start
    line: int = 0  # where the task is written in its file (1-based; 0 when it has no single line)
    counted: bool = True  # among the tasks a screen counts (goal mode's goal is not: it stands for the whole)


class TaskView(Struct, frozen=True):
    """What a task source holds at one instant."""

    tasks: tuple[Task, ...]
    next_task: Task | None
    # A narrowed run (-s ID, --resume-from ID): what it covers ("story 8.3"), and how many tasks outside
    # it are still open. "" and 0 for a run over the whole task source.
    scope: str = ""
    outside_open: int = 0
    # The agent plans its own tasks (goal mode): a task added is progress. Elsewhere only a task done (or
    # reopened) is: an agent that adds a story every iteration is not getting anywhere.
    planned: bool = False

    @property
    def done_count(self) -> int:
        return sum(task.done for task in self.tasks if task.counted)

    @property
    def total(self) -> int:
        return sum(task.counted for task in self.tasks)

    @property
    def all_done(self) -> bool:
        return all(task.done for task in self.tasks)

    @property
    def done_ids(self) -> frozenset[str]:
        return frozenset(task.id for task in self.tasks if task.done)

    @property
    def open_ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks if not task.done)

    @property
    def state(self) -> frozenset[tuple[str, bool]]:
        """The task state as progress sees it: it differs when a task was done or reopened (planned: also added
        or removed)."""
        return frozenset((task.id, task.done) for task in self.tasks if task.done or self.planned)


class SettleFacts(Struct, frozen=True):
    """What a task source's own step after an iteration needs to know (TaskSource.settle)."""

    task: Task
    view: TaskView  # re-read after the agent (the view before it, when the file was invalid)
    number: int
    now: str
    clean: bool  # the agent ran to its end: not failed, limited, cut off or interrupted
    says_done: bool  # it signalled DONE for exactly this task, and not FAIL
    claimed: bool  # it says something is done: the quality gates ran
    gate_failures: tuple[str, ...]
    completion_claimed: bool
    json_result: object | None  # analysis.json_result (goal mode reads it)
    json_error: str | None
    broken: str | None  # the task file could not be read after the agent


class Settlement(Struct, frozen=True):
    """A task source's account of one iteration: the task state after it, and what to tell about it."""

    view: TaskView
    notes: tuple[str, ...] = ()  # progress.txt notes
    info: tuple[str, ...] = ()  # what changed besides files (goal mode: steps added, completed)
    prompt_notes: tuple[str, ...] = ()  # for the next prompt
    failed: str | None = None  # the attempt at the task failed (a claim its quality checks refute)
    refused: str | None = None  # a completion claim the format itself refuses
    refused_told: bool = False  # `refused` is already in the notes (not to be told twice)
    valid: bool = True  # the iteration reported what the format needs (goal mode: a JSON result)
    planning: bool = False  # it was asked to plan only (goal mode): no progress in it never opens the breaker
    error: str | None = None  # the task state could not be settled: the loop stops


class TaskSource(Protocol):
    """A task file the loop works through; re-read at every iteration because the agent edits it."""

    kind: str  # prd | todo | fix-plan | stories
    path: str  # the task file (or folder) as shown to the user and the agent
    # True when ralph itself records a task as done once the agent signals DONE for it (story specs):
    # the agent is not asked to edit the task file.
    marks_done: bool

    def load(self) -> TaskView:
        """Read and validate the file; raise RalphError naming it when it is invalid.

        `tasks` are in the order they are worked on; `next_task` is the first that is not done and
        whose `depends_on` are all done."""
        ...

    def describe(self, task: Task) -> str:
        """The prompt section that tells the agent what the task is."""
        ...

    def problems(self) -> list[Problem]:
        """Every problem `load` would refuse, each at its place, when the format can list them all at once (story
        specs); [] when `load`'s first one is all it knows."""
        ...

    def mark_done(self, task: Task, when: str) -> list[str]:
        """Record `task` as done (only called when `marks_done`); returns notes for the progress entry."""
        ...

    # The format's own steps in an iteration (tasks/base.py has the defaults every plain format uses).

    def begin(self, number: int, max_iterations: int | None, now: str) -> None:
        """An iteration starts (goal mode: PROGRESS.yaml's stats)."""
        ...

    def after_agent(self) -> list[str]:
        """Before the re-read: put back what the agent must not change (goal mode: PROGRESS.yaml); notes."""
        ...

    def settle(self, facts: SettleFacts) -> Settlement:
        """The format's step once the agent and the checks are done: mark a story DONE, apply a goal's
        JSON result, or nothing (prd.json: the agent sets `passes` itself)."""
        ...

    def hook_scope(self, task_id: str) -> tuple[str, str] | None:
        """$SPRINT_ID and $PHASE_ID for hooks when the format has its own (a goal's sprint and phase);
        None: the feature and the task."""
        ...

    def iteration_hooks(self) -> tuple[HookSpec, ...]:
        """Hooks to run after every counted iteration (goal mode's per-iteration hooks: HookSpec)."""
        ...

    def record_hook(self, number: int, hook_id: str, ended: HookEnd | None, now: str) -> str | None:
        """Record a per-iteration hook starting (`ended` None) or ending; a warning when it cannot."""
        ...


# ---------------------------------------------------------------- agents


class AgentRequest(Struct, frozen=True):
    """Everything an agent backend needs to build one invocation."""

    prompt: str
    iteration: int
    project_root: str
    feature_dir: str
    prompt_file: str
    task_id: str
    started_at: datetime | None = None  # relative reset times ("resets 8pm") are read against this
    model: str | None = None  # --model, for backends that can choose one
    resume_session: str | None = None  # the previous run's session id, for backends set to resume it
    home: str | None = None  # its own home in ralph's sandbox (its CLI's config there; its own sandbox off)


class AgentCommand(Struct, frozen=True):
    """One process to start: argv (never a shell string), extra environment, and stdin."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    stdin: bytes
    # The backend's own idle limit: a CLI known to wait in silence (a spent quota it retries without a word)
    # is ended after this long without output. `process.idle_timeout_minutes` in the config wins when set.
    idle_timeout_s: float | None = None


class ProcessOutcome(Struct, frozen=True):
    """How the agent process ended, as the process runner saw it."""

    exit_code: int | None
    duration_s: float
    timed_out: bool = False
    interrupted: bool = False
    start_error: str | None = None
    stdout_bytes: int = 0
    stderr_tail: str = ""
    left_running: int = 0  # processes it left running after it ended, which ralph stopped
    blocked: tuple[str, ...] = ()  # host:port the sandbox refused it (processes/proxy.py)
    idle_limit_s: float | None = None  # it timed out because it printed nothing for this long


class TokenUsage(Struct, frozen=True):
    """Tokens one agent run used, as the vendor counted them (Anthropic's four kinds)."""

    input_tokens: int = 0  # not served from the cache
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0

    @property
    def total(self) -> int:
        """Input + output: seed 004's `total_tokens`."""
        return self.input_tokens + self.output_tokens

    @property
    def all(self) -> int:
        """Every token billed, cache reads and writes included: what a token budget counts."""
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        """Two runs' (or calls') tokens together, kind by kind."""
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
        )


class ErrorKind(enum.Enum):
    """Why an agent run failed, when the backend can tell; the kind decides what the loop does."""

    AUTH = "auth"  # not logged in, invalid key: stop at once
    BILLING = "billing"  # no credit left: stop at once
    BAD_MODEL = "bad_model"  # the model does not exist or is not available: stop at once
    REFUSED = "refused"  # the CLI refused its own invocation (a flag it does not allow here): stop at once
    OVERLOADED = "overloaded"  # 529, 5xx: retry after a backoff
    NETWORK = "network"  # the API cannot be reached: retry after a backoff
    RATE_LIMITED = "rate_limited"  # a per-minute API rate limit (not a usage limit): retry after a backoff
    USAGE_LIMIT = "usage_limit"  # the plan's usage limit: the usage-limit policy
    MAX_TURNS = "max_turns"  # the turn limit ran out: a failed attempt
    BUDGET = "budget"  # the CLI's own cost limit ran out: a failed attempt
    RESUME = "resume"  # the session to resume is gone: run fresh once

    @property
    def fatal(self) -> bool:
        """Nothing will change by trying again: the user must act."""
        return self in (ErrorKind.AUTH, ErrorKind.BILLING, ErrorKind.BAD_MODEL, ErrorKind.REFUSED)

    @property
    def transient(self) -> bool:
        """The service, not the task, failed: try again after a backoff, without counting the iteration."""
        return self in (ErrorKind.OVERLOADED, ErrorKind.NETWORK, ErrorKind.RATE_LIMITED)


class AgentResult(Struct, frozen=True):
    """What one agent run produced, normalised across backends."""

    final_text: str
    exit_code: int | None
    duration_s: float
    failed: bool
    error: str | None = None
    timed_out: bool = False
    interrupted: bool = False
    is_error: bool = False  # the CLI itself reported an error (Claude `is_error`), whatever its exit code
    model: str | None = None  # the model that did the work, when the backend reports it
    cost_usd: float | None = None
    tokens: int | None = None  # input + output + cache tokens, when reported
    permission_denials: tuple[str, ...] = ()  # tool uses the CLI refused, e.g. "Bash(rm -rf build)"
    tool_errors: tuple[str, ...] = ()  # tool results the CLI marked as errors
    usage_limit: UsageLimit | None = None  # the vendor's usage limit was hit: not a failure of the task
    limit_warning: LimitWarning | None = None
    windows: tuple[UsageWindow, ...] = ()  # the account's usage windows the call reported, the last word on each
    windows_before: tuple[UsageWindow, ...] = ()  # the same windows as the book knew them before (the call's share)
    usage: TokenUsage | None = None  # per kind, when reported (`tokens` is their sum)
    num_turns: int | None = None
    session_id: str | None = None
    stop_reason: str | None = None  # the model's last stop reason (end_turn, max_tokens, tool_use ...)
    error_kind: ErrorKind | None = None
    left_running: int = 0  # processes the agent left running after it ended (ralph stopped them)
    blocked: tuple[str, ...] = ()  # host:port the sandbox refused it
    # Failover (agents/failover.py): the backend that ran, whether --model was asked of it (the first agent's
    # alone), and the agent the next iteration runs on when this one is limited or cannot log in.
    agent: str = ""
    model_asked: bool = True
    failover_to: str | None = None


class OutputParser(Protocol):
    """Consumes the agent's stdout as it streams, once, and produces the result at the end."""

    def feed(self, data: bytes) -> None: ...

    def activity(self) -> str | None:
        """What the agent is doing now (e.g. "Bash: pytest -q"), when its output says; else None."""
        ...

    def finish(self, outcome: ProcessOutcome) -> AgentResult: ...


class Agent(Protocol):
    """A backend: how to start the CLI and how to read what it printed, and what the run must know of it."""

    name: str
    missing: str | None  # why its CLI cannot run on this machine (not installed); None: it can
    account: str | None  # whose usage limits it shares (agents/accounts.py: never a secret); None: not known
    commits: bool  # it commits its own work; else ralph commits each accepted iteration for it
    runtime_files: tuple[str, ...]  # gitignore patterns of the files its CLI keeps in the repository
    permissions: str | None  # what it may do without asking (ask | edits | all), as it was started
    sandbox: SandboxNeeds  # what its CLI needs inside ralph's sandbox (core/sandbox.py)

    def command(self, request: AgentRequest) -> AgentCommand: ...

    def parser(self, request: AgentRequest) -> OutputParser: ...

    def held(self, now: datetime) -> UsageLimit | None: ...  # no call now: every account is past the user's cap


class AgentDefaults:
    """Every optional member of an Agent with the value a backend that does not set it has: ralph's own backends
    inherit these, and a plugin's agent that lacks one is given it once, where the registry makes it."""

    missing: str | None = None
    account: str | None = None
    commits: bool = True
    runtime_files: tuple[str, ...] = ()
    permissions: str | None = None
    sandbox: SandboxNeeds = SandboxNeeds()

    def held(self, now: datetime) -> UsageLimit | None:  # the failover chain (agents/failover.py) reads the book
        return None


# ---------------------------------------------------------------- time and events

EventSink = Callable[[object], None]


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with a Z, to the second: the form every record uses."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
