"""A parallel run steered as a whole (issue 36): `ralph pause|resume|stop [-f FEATURE]` without `--story` write the
feature's own control.json (the coordinator's), beside each running loop's (state/steer.py). Here the coordinator
reads it before it starts a loop: paused, it starts none (the running loops hold between their iterations too);
stopped, it starts none and ends, `stopped`, once the running loops have ended after their iterations. A story whose
own loop the user stopped (`ralph stop --story ID`) is not started again in this run. Each change is told once, on
the coordinator's screen and in fleet.json (`steered`), which `ralph status`, the monitor and the page show."""

from __future__ import annotations

import contextlib

from ralphloop.core.errors import RalphError
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.steering import Request, by_you
from ralphloop.fleet.context import Fleet
from ralphloop.records.control import ControlFile


def asked(fleets: list[Fleet]) -> dict[str, Request]:
    """Each fleet's pause or stop in force, by feature ({}: none), told once when it changes."""
    found: dict[str, Request] = {}
    for fleet in fleets:
        steering = ControlFile(fleet.paths.control).read()
        request = steering.stop or steering.paused
        words = by_you(request, "stopped" if request is steering.stop else "paused") if request else None
        if words != fleet.book.fleet.get("steered"):
            then = (
                "no new loop starts; the running ones end after their iteration"
                if steering.stop
                else "no new loop starts"
            )
            fleet.say(f"✋ {words}: {then}" if words else "✋ resumed: loops start again")
            with fleet.book.lock:
                fleet.book.write(steered=words)
        if request is not None:
            found[fleet.paths.name] = request
            _to_every_loop(fleet, request)
    return found


def _to_every_loop(fleet: Fleet, request: Request) -> None:
    """The whole run's pause or stop, in each running loop's own control.json too: a loop started as the user
    asked (before it held its lock, so that the command missed it) holds or stops like the others."""
    for story in fleet.handles:
        control = ControlFile(fleet.loop_paths(story).control)
        steering = control.read()
        if steering.stop is None and (request.action == "stop" or steering.paused is None):
            with contextlib.suppress(OSError, RalphError):  # its folder going away as it ends
                control.ask(Request(request.action, request.source, request.at))


def stopped_by_you(fleet: Fleet, story: str, code: int) -> bool:
    """The story's loop ended at the user's stop (exit 3): not a failure; held back from this run."""
    if code != ExitReason.STOPPED.exit_code:
        return False
    fleet.held_back.add(story)
    return True


def forget_stop(fleets: list[Fleet]) -> None:
    """A stop was for the run that was going: this one starts without it (a pause stays, told afresh)."""
    for fleet in fleets:
        ControlFile(fleet.paths.control).forget_stop()
        with fleet.book.lock:
            fleet.book.write(steered=None)


def stopped_now(fleets: list[Fleet]) -> bool:
    """Whether the interruption the run ended at was a `ralph stop --now` of the whole run."""
    stops = [ControlFile(fleet.paths.control).read().stop for fleet in fleets]
    return any(stop is not None and stop.now for stop in stops)
