"""The tape agent: runs `python -m ralphloop_tape.cli`, which prints JSON lines of its own ({"say": ...},
{"did": ...}, {"done": ..., "cost": ...}) and passes the story it is given."""

from __future__ import annotations

import json
import sys

from ralphloop.agents.text import agent_env, describe_failure, outcome_result
from ralphloop.core.protocols import AgentCommand, AgentRequest, AgentResult, ProcessOutcome


def make(settings: object, paths: object) -> TapeAgent:
    return TapeAgent()


class TapeAgent:
    """Sets none of an Agent's optional members: ralph gives it their defaults."""

    name = "tape"

    def command(self, request: AgentRequest) -> AgentCommand:
        argv = (sys.executable, "-m", "ralphloop_tape.cli")
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode())

    def parser(self, request: AgentRequest) -> TapeParser:
        return TapeParser()


class TapeParser:
    """Reads the tape's lines as they stream: what it is doing, and its final words."""

    def __init__(self) -> None:
        self._buffer = b""
        self._doing: str | None = None
        self._final = ""
        self._cost: float | None = None

    def feed(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if isinstance(event.get("did"), str):
            self._doing = event["did"]
        if isinstance(event.get("done"), str):
            self._final = event["done"]
            cost = event.get("cost")
            self._cost = float(cost) if isinstance(cost, int | float) else None

    def activity(self) -> str | None:
        return self._doing

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        self._line(self._buffer)
        return outcome_result(outcome, self._final, describe_failure(outcome), cost_usd=self._cost)
