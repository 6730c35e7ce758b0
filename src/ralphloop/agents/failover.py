"""Failover between agents: `--agent claude,codex` (or `agents: [claude, codex]`) runs each iteration on the first
agent of the list that is not limited, and moves to the next one when the agent in use hits its usage limit or
cannot authenticate.

FailoverAgent is itself an Agent, so the engine runs it like any other: `command` picks the agent of this
iteration, and the parser it returns reads that agent's output with the agent's own parser, then settles the
result. A usage limit is written to the shared book of limits (agents/agent_limits.py, per account, for every
loop), until its reset instant, or `usage_limit.fallback_wait_minutes` from now when the vendor gave none; an
auth or billing failure takes that agent out of this run only (logging in again does not need a reset). When
another agent can run now, the result says so (`failover_to`): the engine does not count the iteration and runs
the next one at once, on that agent. When the first agent's reset has passed, it is chosen again. The usage windows
a call reports (`AgentResult.windows`) go into the same book, for every loop on that account.

One agent alone (a backend with an `account`) runs behind a FailoverAgent too, so that its limits go into the book
for the chains of other loops. When every agent is limited, the one whose limit ends first runs: it meets its
limit again at once, and the usage-limit policy (`--on-usage-limit`: wait, exit or ask) applies as it does with
one agent. `--model` is the first agent's: the others run with their CLI's own default model, and it is not
checked against theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from msgspec.structs import replace

from ralphloop.agents.agent_limits import LimitBook, Limited, Windows
from ralphloop.agents.sandbox_needs import merged
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.limits import UsageLimit, WindowReading
from ralphloop.core.protocols import (
    Agent,
    AgentCommand,
    AgentDefaults,
    AgentRequest,
    AgentResult,
    ErrorKind,
    ProcessOutcome,
)
from ralphloop.core.protocols import OutputParser as Parser
from ralphloop.guards.windows import Capped, WindowCaps, capped
from ralphloop.words.figures import local_time
from ralphloop.words.textsafe import one_line

# The failures that another agent's account does not share: its limit, its login, its credit.
_LOCKED_OUT = (ErrorKind.AUTH, ErrorKind.BILLING)


def account_key(agent: Agent) -> str:
    """The book's key of an agent: its backend and account ("claude/login:/home/me/.claude")."""
    return f"{agent.name}/{agent.account or 'default'}"


class FailoverAgent(AgentDefaults):
    """Several agents in the order the user prefers them; one runs each iteration."""

    def __init__(
        self,
        agents: Sequence[Agent],
        book: LimitBook,
        clock: Clock,
        fallback_wait_s: float,
        margin_s: float = 0.0,
        caps: WindowCaps | None = None,
    ) -> None:
        self.agents = tuple(agents)
        self.caps = caps or WindowCaps()  # the user's cap on each usage window (guards/windows.py)
        self.book = book
        self._clock = clock
        self._fallback_s = fallback_wait_s
        self._margin_s = margin_s  # a limit ends this long after the vendor's reset (usage_limit.margin_seconds)
        self._out: dict[str, str] = {}  # account → why it cannot work in this run (a failed login, no credit)
        self._memory: dict[str, Limited] = {}  # this run's own marks: they hold when the book cannot be read or written
        self._read: Windows = {}  # this run's own window readings, likewise: its caps hold without the book
        self._last: Agent | None = None  # whose result came last (its session is the one worth resuming)
        self.warn: Callable[[str], None] = lambda message: None  # the run's warnings (set by start/build.py)
        self.tell: Callable[[str], None] = lambda message: None  # the run's notices (set by start/build.py)
        self._warned = False
        self._unwritten = False  # the book could not be written, and the run was told
        self._capped_now: Capped | None = None  # the cap the last choice passed over
        self._told: tuple[str, str] | None = None  # the last cap the user was told of (account, window)
        self.missing: str | None = next((a.missing for a in self.agents if a.missing), None)
        self.commits = all(a.commits for a in self.agents)  # else ralph commits for them
        # the files every member's CLI keeps in the repository (aider's caches), kept out of git from the start
        self.runtime_files = tuple(dict.fromkeys(p for a in self.agents for p in a.runtime_files))
        self.sandbox = merged([agent.sandbox for agent in self.agents])  # the box holds what each member needs
        self.current = self._choose(strict=True)
        self.name = self.current.name  # the agent of this iteration (of the last one, until the next starts)
        self.permissions = self.current.permissions

    def command(self, request: AgentRequest) -> AgentCommand:
        self.current = self._choose()
        passed = self._capped_now
        told = (passed.account, passed.reading.window.name) if passed is not None else None
        if told is not None and told != self._told and passed is not None:  # once per cap passed over
            self.tell(f"{passed.limit().message}: this iteration runs on {self.current.name}")
        self._told = told
        self.name = self.current.name
        self.permissions = self.current.permissions
        return self.current.command(self._request(request))

    def parser(self, request: AgentRequest) -> Parser:
        return _Settling(self, self.current, self.current.parser(self._request(request)))

    def _request(self, request: AgentRequest) -> AgentRequest:
        """The request as the chosen agent gets it: --model only for the first agent, a session only its own."""
        first = self.current is self.agents[0]
        keep_session = self._last is None or self._last is self.current
        return replace(
            request,
            model=request.model if first else None,
            resume_session=request.resume_session if keep_session else None,
        )

    def held(self, now: datetime) -> UsageLimit | None:
        """Why no call may start now: every agent that may work is held, and the one free first is held by the
        user's cap on a window (a vendor's own limit is met by calling: it costs nothing, and says when it ends)."""
        if not self.caps:
            return None
        blocks = self._blocks(now)
        usable = [agent for agent in self.agents if account_key(agent) not in self._out]
        if not usable or any(account_key(agent) not in blocks for agent in usable):
            return None
        until, capped = min((blocks[account_key(agent)] for agent in usable), key=lambda block: block[0])
        return capped.limit() if capped is not None and capped.until >= until else None

    def next_reset(self, now: datetime) -> datetime | None:
        """When the first agent's account next has a window reset (`--start-at reset`): the window past its cap,
        else the first capped window to reset, else (no caps) the first window to reset; None: none known."""
        key = account_key(self.agents[0])
        limited, known = self._book(now)
        readings = known.get(key, {})
        held = capped(self.agents[0].name, key, readings, self.caps, now, self._fallback_s)
        if held is not None or key in limited:  # past a cap, or refused by its vendor: when that ends
            return max(held.until if held else now, limited[key].until if key in limited else now)
        capped_ones = [r for name, r in readings.items() if not self.caps or self.caps.of(name) is not None]
        return min((r.window.resets_at for r in capped_ones if r.window.resets_at is not None), default=None)

    def _blocks(self, now: datetime, *, strict: bool = False) -> dict[str, tuple[datetime, Capped | None]]:
        """Every account that may not be called at `now`, until when, and the cap that holds it (None: a limit)."""
        limited, readings = self._book(now, strict=strict, windows=bool(self.caps))
        blocks: dict[str, tuple[datetime, Capped | None]] = {key: (mark.until, None) for key, mark in limited.items()}
        for agent in self.agents if self.caps else ():
            key = account_key(agent)
            held = capped(agent.name, key, readings.get(key, {}), self.caps, now, self._fallback_s)
            if held is not None and (key not in blocks or held.until >= blocks[key][0]):
                blocks[key] = (held.until, held)
        return blocks

    def _book(self, now: datetime, *, strict: bool = False, windows: bool = True) -> tuple[dict[str, Limited], Windows]:
        """The shared book at `now` (the marks with this run's own, the windows). Mid-run, a book that cannot be
        read is warned about once and this run's marks go on alone; before the run, it stops it."""
        try:  # the windows matter to caps (and --start-at reset): without them, the marks alone are read
            found, readings = self.book.read(now) if windows else (self.book.active(now), {})
        except RalphError as exc:
            if strict:
                raise
            if not self._warned:
                self._warned = True
                self.warn(f"{exc}; failover goes on with this run's own limits")
            found, readings = {}, {}
        for key, mark in list(self._memory.items()):  # the later end of a limit wins
            if mark.until > now and (key not in found or mark.until > found[key].until):
                found[key] = mark
        for key, own in list(self._read.items()) if windows else ():  # the later reading of a window wins
            theirs = readings.setdefault(key, {})
            for name, reading in own.items():
                live = reading.window.resets_at is None or reading.window.resets_at > now
                if live and (name not in theirs or reading.read_at > theirs[name].read_at):
                    theirs[name] = reading
        return found, readings

    def _choose(self, *, strict: bool = False) -> Agent:
        """The first agent that may run now; when every one is held, the one free first."""
        blocks = self._blocks(self._clock.now(), strict=strict)
        usable = [agent for agent in self.agents if account_key(agent) not in self._out]
        self._capped_now = None
        for agent in usable:
            if account_key(agent) not in blocks:
                return agent
            self._capped_now = self._capped_now or blocks[account_key(agent)][1]
        if not usable:
            return self.agents[0]  # none can work: the run stops on the result that said so
        return min(usable, key=lambda agent: blocks[account_key(agent)][0])

    def settle(self, agent: Agent, result: AgentResult) -> AgentResult:
        """The result as the loop gets it: which agent ran, and what comes next when this one cannot go on: the
        next agent that can run now (`failover_to`), else a wait for the first limit to end, else the stop."""
        self._last = agent
        if len(self.agents) > 1:  # one agent alone has no share to tell apart
            result = replace(result, agent=agent.name, model_asked=agent is self.agents[0])
        now = self._clock.now()
        key = account_key(agent)
        stopped = not result.interrupted and (result.usage_limit is not None or result.error_kind in _LOCKED_OUT)
        if stopped and result.usage_limit is not None:
            self._mark(key, Limited(self._until(result, now), "usage_limit", self._said(result)), now)
        elif stopped:
            self._out[key] = one_line(result.error or "it cannot work", 200)
        result = self._note(key, result, now)
        if not stopped:
            return result
        if len(self.agents) == 1:
            return result  # the usage-limit policy, or the stop, as without failover
        blocks = self._blocks(now)
        usable = [each for each in self.agents if account_key(each) not in self._out]
        free = [each for each in usable if account_key(each) not in blocks]
        if free:
            return replace(result, failover_to=free[0].name)
        if not usable:  # nobody can work: the stop, naming every agent's reason
            why = "; ".join(f"{each.name}: {self._out[account_key(each)]}" for each in self.agents)
            return replace(result, error=f"no agent of the list can work ({why})")
        first = min(usable, key=lambda each: blocks[account_key(each)][0])
        if first is agent and result.usage_limit is not None:
            return result  # its own limit ends first: the policy waits for it, as with one agent
        until = blocks[account_key(first)][0]
        said = f"{agent.name} cannot work ({self._out[key]})" if key in self._out else self._said(result)
        held = "limited or past your window cap" if self.caps else "limited"
        message = f"{said}; every agent of the list is {held}, {first.name} first, until {local_time(until)}"
        return replace(
            result,
            usage_limit=UsageLimit(first.name, one_line(message, 300), until, source="failover"),
            error_kind=ErrorKind.USAGE_LIMIT,
        )

    def _mark(self, key: str, limited: Limited, now: datetime) -> None:
        """The limit into the shared book, and this run's memory (a book that cannot be written is warned about:
        this run still knows)."""
        self._memory[key] = limited
        try:
            self.book.mark(key, limited, now)
        except RalphError as exc:
            self._unwritten = True
            self.warn(f"{exc}; this run keeps the limit itself")

    def _note(self, key: str, result: AgentResult, now: datetime) -> AgentResult:
        """The usage windows the call reported into the shared book, for every loop on that account (a book that
        cannot be written is warned about once); the result with what the book knew of them before."""
        if not result.windows:
            return result
        own = self._read.setdefault(key, {})
        own.update({window.name: WindowReading(window, now) for window in result.windows})
        try:
            return replace(result, windows_before=self.book.note(key, result.windows, now))
        except RalphError as exc:
            if not self._unwritten:  # one word of a book that cannot be written is enough
                self._unwritten = True
                self.warn(f"{exc}; this run keeps its calls' usage windows itself (other loops do not see them)")
        return result

    def _until(self, result: AgentResult, now: datetime) -> datetime:
        """When the limit ends: the vendor's reset plus the margin (a reset already past, as a vendor still saying
        "limited" just after it: from now), else the fallback wait."""
        limit = result.usage_limit
        resets = limit.resets_at if limit is not None else None
        if resets is None:
            return now + timedelta(seconds=self._fallback_s)
        return max(resets, now) + timedelta(seconds=self._margin_s)

    @staticmethod
    def _said(result: AgentResult) -> str:
        return result.usage_limit.message if result.usage_limit is not None else result.error or ""


class _Settling:
    """The chosen agent's own parser; its result settled by the chain at the end."""

    def __init__(self, chain: FailoverAgent, agent: Agent, inner: Parser) -> None:
        self._chain, self._agent, self._inner = chain, agent, inner

    def feed(self, data: bytes) -> None:
        self._inner.feed(data)

    def activity(self) -> str | None:
        return self._inner.activity()

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        return self._chain.settle(self._agent, self._inner.finish(outcome))
