"""The knobs of one run, grouped by what they govern; resolved once (config/settings.py) and never changed."""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.config.questions import QuestionSettings
from ralphloop.core.hook_spec import CommandSpec, LifecycleHooks
from ralphloop.core.runner import ProcessLimits
from ralphloop.guards.backoff import Backoff
from ralphloop.guards.breaker import BreakerConfig
from ralphloop.guards.budget import Budget
from ralphloop.guards.windows import WindowCaps


class AgentSettings(Struct, frozen=True):
    """Which agent runs, and what every backend may be asked (the `agent:` and `scripted:` settings)."""

    name: str  # the backend: built in or a plugin's (with failover, the first of `chain`)
    command: str | None  # the command agent's command line (--agent-cmd)
    model: str | None  # --model: asked for, and checked against the model that answered
    poorman: bool  # any model will do: --model is not verified
    # What the agent may do without asking (PERMISSIONS): each CLI backend maps it to its own flags. `all` (no
    # checks at all) only ever because the user asked for it.
    permissions: str
    chain: tuple[str, ...]  # `--agent claude,codex`: the failover order (agents/failover.py); (name,) for one
    scripted_script: str | None  # the scripted agent's script (absolute); None: the feature's script.yaml


class LoopSettings(Struct, frozen=True):
    """How the loop goes: how long, what it reads into prompts, when it stops on the agent's word."""

    max_iterations: int | None  # None: until done
    progress_bytes: int  # the recent progress.txt put into each prompt
    completion: str  # verify | trust
    blocked_threshold: int  # BLOCKED iterations in a row that stop the loop
    max_retries: int  # attempts per task in all (seed 002)
    rate_limit_per_hour: int  # agent calls per hour, per account
    rate_account: str | None  # whose calls count together; None: the agent's name
    story_order: tuple[str, ...] | None  # seed 002: the order stories are worked in
    promise: str | None  # config `completion.promise`: the promise to look for; None: <promise>COMPLETE</promise>


class UsagePolicy(Struct, frozen=True):
    """What to do at a vendor usage limit."""

    action: str = "wait"  # wait | exit | ask (ask needs someone at a terminal; without one it waits)
    margin_s: float = 60.0  # extra wait past the reset time the vendor gives
    fallback_wait_s: float = 30 * 60.0  # when the vendor gives no reset time
    pause_at: float | None = None  # pause before the limit, at this share of the window used
    # seed 003: "Prompt user: wait or exit"; "No response in 30s → Auto-exit"
    ask_timeout_s: float = 30.0  # how long `ask` waits for an answer
    on_no_answer: str = "exit"  # exit | wait: what a question nobody answered (or an empty answer) does
    # issue 34: the user's cap on each usage window (`--max-window`, `usage_limit.windows`): an account past one is
    # held as if limited until that window resets
    windows: WindowCaps = field(default_factory=WindowCaps)

    def at(self, terminal: bool) -> UsagePolicy:
        """The policy where the run is: nobody to ask without a terminal, so `ask` waits."""
        return replace(self, action="wait") if self.action == "ask" and not terminal else self

    def question(self, situation: str) -> str:
        """The question `ask` puts, saying what happens when nobody answers it in time."""
        doing = "exiting" if self.on_no_answer == "exit" else "waiting"
        return f"{situation} Wait or exit? ({doing} in {self.ask_timeout_s:g}s unless told)"

    def answer(self, asked: str | None) -> str:
        """The user's answer ("exit" or "wait"), or `on_no_answer` when there was none."""
        return asked if asked in ("exit", "wait") else self.on_no_answer


class Policy(Struct, frozen=True):
    """The resolved knobs of one run, as the engine reads them: the settings' own sections, held as they are
    (config/settings.py is their one owner; nothing is copied field by field), and what building the run decided."""

    loop: LoopSettings
    agent: AgentSettings
    limits: ProcessLimits
    template: str
    archive: bool = True
    breaker: BreakerConfig = field(default_factory=BreakerConfig)
    usage: UsagePolicy = field(default_factory=UsagePolicy)
    budget: Budget = field(default_factory=Budget)
    backoff: Backoff = field(default_factory=Backoff)
    reset_circuit: str | None = None  # reset the breaker before the first iteration, for this reason
    auto_commit: bool = False  # commit each accepted iteration's changes (seed 004)
    hooks: LifecycleHooks = field(default_factory=LifecycleHooks)
    gates: tuple[CommandSpec, ...] = ()  # quality_checks: run after an iteration that claims a task or completion
    questions: QuestionSettings = field(default_factory=QuestionSettings)  # a loop that needs you: how long it waits
