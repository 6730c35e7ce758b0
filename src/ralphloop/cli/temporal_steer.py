"""`ralph pause | resume | stop [--now] | say | answer` of a parallel run on Temporal (issue 37): the same words as
on one machine (state/steer.py's checks of the text), sent as the workflow's `steer` signal once its `fleet` query
says the run, and the story named, are running. The workflow holds the whole run's pause or stop, and each running
loop's worker applies the request to that loop's own control.json (temporal/activities.py's Inbox)."""

from __future__ import annotations

import asyncio
from typing import Any

from ralphloop.cli.temporal_status import record_of
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import iso
from ralphloop.project.paths import FeaturePaths

_SAID = {
    "pause": "paused: no new loop starts, and each running loop holds after its iteration; `ralph resume` goes on",
    "resume": "resumed: loops start again",
    "stop": "stopping: no new loop starts; the running loops end after their iteration",
    "stop-now": "stopping now: every running loop is interrupted, its attempt saved and undone, as after a Ctrl+C",
    "say": "said: your words reach the next prompt of each running loop, once (within a heartbeat)",
    "answer": "answered: the loop that waits on a question goes on with your answer (within a heartbeat)",
}


def on_temporal(paths: FeaturePaths) -> bool:
    """Whether the feature's runs go on Temporal: its temporal.json, or the config's `parallel.engine: temporal`."""
    return record_of(paths) is not None


def steer_remote(
    paths: FeaturePaths, action: str, text: str, *, now: bool, story: str | None, source: str = "cli"
) -> str:
    from ralphloop.temporal.launch import server_in, steer_run
    from ralphloop.temporal.shapes import Steer

    server, wid = server_in(record_of(paths) or {})

    def check(fleet: dict[str, Any]) -> None:
        if not fleet.get("alive"):
            raise RalphError(f"ralph {action}: no run of {paths.selector} is going on Temporal; nothing was sent")
        running = [str(loop.get("story")) for loop in fleet.get("loops") or [] if loop.get("state") == "running"]
        if story is not None and story not in running:
            shown = ", ".join(running) or "none"
            raise RalphError(f"--story {story}: no running loop of the run has it (running: {shown}); nothing was sent")
        if action in ("say", "answer") and not running:
            raise RalphError(f"ralph {action}: no loop of the run is running; nothing was sent")

    asked = Steer(action, source, iso(SystemClock().now()), text, story, now and action == "stop")
    asyncio.run(steer_run(server, wid, asked, check))
    said = _SAID["stop-now" if asked.now else action]
    if story is not None and action in ("pause", "resume", "stop"):
        said = said.replace("each running loop", "its loop").replace("the running loops", "its loop")
    return said
