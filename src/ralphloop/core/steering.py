"""Steering a running loop (issue 36): what a user asked of it from a terminal or the page, as values.

A request is one action (pause, resume, stop, say, answer) with its source (cli, web) and time. `Steering` is what
the requests so far add up to: whether the loop is paused (and by whom, when), whether it is to stop (after the
iteration, or now), and the guidance and answers it has not used yet. Pure: records/control.py keeps it in a file,
the loop reads it between iterations.
"""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct
from msgspec.structs import replace

ACTIONS = ("pause", "resume", "stop", "say", "answer")
SOURCES = ("cli", "web")
PAUSED = "paused"  # the Waiting kind of a loop held by the user's pause (core/waiting.py)
AGENT_MARK = "RALPH_AGENT"  # set in every agent's environment: an agent cannot steer the loop it runs in


class Request(Struct, frozen=True):
    """One thing the user asked: `text` for say and answer; `now` for a stop that interrupts the iteration."""

    action: str
    source: str
    at: datetime
    text: str = ""
    now: bool = False
    id: int = 0  # its number in the file: a say or an answer is used once, by it


Said = tuple[Request, ...]  # guidance (`ralph say`) for a prompt


class Steering(Struct, frozen=True):
    """What the requests add up to."""

    paused: Request | None = None  # the pause in force (a resume clears it)
    resumed: Request | None = None  # the last resume (the loop tells whose)
    stop: Request | None = None  # a stop asked of the running loop
    guidance: tuple[Request, ...] = ()  # `say`s the loop has not put in a prompt yet, oldest first
    answers: tuple[Request, ...] = ()  # `answer`s it has not used yet
    next_id: int = 1

    def plus(self, request: Request) -> Steering:
        """These, with `request` applied (numbered, when it is a say or an answer)."""
        if request.action == "pause":
            return self if self.paused is not None else replace(self, paused=request)
        if request.action == "resume":
            return replace(self, paused=None, resumed=request)
        if request.action == "stop":
            return replace(self, stop=request if self.stop is None or request.now else self.stop)
        numbered = replace(request, id=self.next_id)
        if request.action == "say":
            return replace(self, guidance=(*self.guidance, numbered), next_id=self.next_id + 1)
        return replace(self, answers=(*self.answers, numbered), next_id=self.next_id + 1)

    def without(self, used: tuple[int, ...]) -> Steering:
        """These, the says and answers numbered `used` taken out (the loop used them)."""
        return replace(
            self,
            guidance=tuple(each for each in self.guidance if each.id not in used),
            answers=tuple(each for each in self.answers if each.id not in used),
        )


def by_you(request: Request, what: str) -> str:
    """ "paused by you at 14:02 (web)": what a surface says of a request."""
    return f"{what} by you at {request.at.astimezone():%H:%M} ({request.source})"


def told(request: Request) -> str:
    """What a surface says of a request the loop acted on: "paused by you at 14:02 (cli)", "guidance received: said
    by you at 14:03 (web): TEXT" (the text on one line, cut at 300 characters)."""
    words = " ".join(request.text.split())
    words = words if len(words) <= 300 else words[:299] + "…"
    if request.action == "say":
        return f"guidance received: {by_you(request, 'said')}: {words}"
    if request.action == "answer":
        return f"answer received: {by_you(request, 'answered')}: {words}"
    what = {"pause": "paused", "resume": "resumed", "stop": "stopped at once" if request.now else "stopped"}
    return by_you(request, what.get(request.action, request.action))
