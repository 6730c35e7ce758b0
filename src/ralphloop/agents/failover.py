"""Failover between agents: `--agent claude,codex` (or `agents: [claude, codex]`) runs each iteration on the first
agent of the list that is not limited, and moves to the next one when the agent in use hits its usage limit or
cannot authenticate.

FailoverAgent is itself an Agent, so the engine runs it like any other: `command` picks the agent of this
iteration, and the parser it returns reads that agent's output with the agent's own parser, then settles the
result. A usage limit is written to the shared book of limits (state/agent_limits.py, per account, for every
loop), until its reset instant, or `usage_limit.fallback_wait_minutes` from now when the vendor gave none; an
auth or billing failure takes that agent out of this run only (logging in again does not need a reset). When
another agent can run now, the result says so (`failover_to`): the engine does not count the iteration and runs
the next one at once, on that agent. When the first agent's reset has passed, it is chosen again.

One agent alone (a backend with an `account`) runs behind a FailoverAgent too, so that its limits go into the book
for the chains of other loops. When every agent is limited, the one whose limit ends first runs: it meets its
limit again at once, and the usage-limit policy (`--on-usage-limit`: wait, exit or ask) applies as it does with
one agent. `--model` is the first agent's: the others run with their CLI's own default model, and it is not
checked against theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from msgspec.structs import replace

from ralphloop.protocols import Agent, AgentCommand, AgentRequest, AgentResult, Clock, ErrorKind, ProcessOutcome
from ralphloop.protocols import OutputParser as Parser
from ralphloop.state.agent_limits import LimitBook, Limited

# The failures that another agent's account does not share: its limit, its login, its credit.
_LOCKED_OUT = (ErrorKind.AUTH, ErrorKind.BILLING)


def account_key(agent: Agent) -> str:
    """The book's key of an agent: its backend and account ("claude/login:/home/me/.claude")."""
    return f"{agent.name}/{getattr(agent, 'account', None) or 'default'}"


class FailoverAgent:
    """Several agents in the order the user prefers them; one runs each iteration."""

    def __init__(self, agents: Sequence[Agent], book: LimitBook, clock: Clock, fallback_wait_s: float) -> None:
        self.agents = tuple(agents)
        self.book = book
        self._clock = clock
        self._fallback_s = fallback_wait_s
        self._out: set[str] = set()  # the accounts that failed to log in, or have no credit, in this run
        self._last: Agent | None = None  # whose result came last (its session is the one worth resuming)
        self.missing: str | None = next((m for a in self.agents if (m := getattr(a, "missing", None))), None)
        self.commits = all(getattr(a, "commits", True) for a in self.agents)  # else ralph commits for them
        # the files every member's CLI keeps in the repository (aider's caches), kept out of git from the start
        self.runtime_files = tuple(dict.fromkeys(p for a in self.agents for p in getattr(a, "runtime_files", ())))
        self.current = self._choose()
        self.name = self.current.name  # the agent of this iteration (of the last one, until the next starts)

    def command(self, request: AgentRequest) -> AgentCommand:
        self.current = self._choose()
        self.name = self.current.name
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

    def _choose(self) -> Agent:
        """The first agent that may run now; when every one is limited, the one whose limit ends first."""
        limited = self.book.active(self._clock.now())
        usable = [agent for agent in self.agents if account_key(agent) not in self._out]
        for agent in usable:
            if account_key(agent) not in limited:
                return agent
        if not usable:
            return self.agents[0]  # none can log in: the first one says why, and the run stops
        return min(usable, key=lambda agent: limited[account_key(agent)].until)

    def settle(self, agent: Agent, result: AgentResult) -> AgentResult:
        """The result as the loop gets it: which agent ran, and the next agent when this one cannot go on."""
        self._last = agent
        if len(self.agents) > 1:  # one agent alone has no share to tell apart
            result = replace(result, agent=agent.name, model_asked=agent is self.agents[0])
        if result.interrupted or result.timed_out:
            return result
        now = self._clock.now()
        if result.usage_limit is not None:
            self.book.mark(
                account_key(agent), Limited(self._until(result, now), "usage_limit", self._said(result)), now
            )
        elif result.error_kind in _LOCKED_OUT:
            self._out.add(account_key(agent))
        else:
            return result
        following = self._choose()
        if following is agent or account_key(following) in self.book.active(now):
            return result  # every agent is limited: the usage-limit policy (or the stop) applies
        return replace(result, failover_to=following.name)

    def _until(self, result: AgentResult, now: datetime) -> datetime:
        """The vendor's reset (one already past marks nothing: the agent may go on), else the fallback wait."""
        limit = result.usage_limit
        resets = limit.resets_at if limit is not None else None
        return resets if resets is not None else now + timedelta(seconds=self._fallback_s)

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
