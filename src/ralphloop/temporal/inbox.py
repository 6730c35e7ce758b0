"""A running loop's line to its workflow (issue 37): each heartbeat, its worker asks the workflow's `inbox` query
for what the user asked of it (pause, resume, stop, say, answer; the workflow's own END at the run's budget) and
applies it to the loop's own control.json as `ralph pause|resume|stop|say|answer` on this machine would (the same
state/steer.steer), and tells the workflow what the loop has spent (the `spent` signal)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from temporalio import activity

from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive
from ralphloop.fleet.launcher import LoopHandle
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.steer import steer
from ralphloop.temporal.shapes import END

if TYPE_CHECKING:
    from temporalio.client import Client


class Inbox:
    """What the user asked of one running loop through the workflow (its `inbox` query, asked each heartbeat),
    applied to the loop's own control.json as `ralph pause|resume|stop|say|answer` on this machine would: the same
    state/steer.steer, so a pause holds it between iterations and a `stop --now` interrupts it as a Ctrl+C."""

    def __init__(self, client: Client, events: asyncio.AbstractEventLoop, workflow: str, story: str) -> None:
        self.client, self.events, self.workflow, self.story = client, events, workflow, story
        self.seen = 0  # a try of the activity applies the whole inbox to its own, new loop
        self.spent: tuple[float, int] = (0.0, 0)

    def apply(self, paths: FeaturePaths, loop: LoopHandle) -> None:
        """What is new in the inbox, applied to the loop in `paths` (`loop`: its handle, which the workflow's END
        stops as the local coordinator stops a loop at the run's budget)."""

        if lock_holder_alive(paths.lock) is None:
            return  # the loop has not taken its lock yet (or ended): asked again at the next heartbeat
        items = self._ask(self.client.get_workflow_handle(self.workflow).query("inbox", args=[self.story, self.seen]))
        if items is None:
            return
        for number, action, text, now, source in items:
            self.seen = max(self.seen, int(number))
            if action == END:  # the run's budget is spent: stopped as on Ctrl+C (its iteration recorded)
                loop.terminate()
                print(f"■ {self.story}: stopped: the run's {source} is spent", flush=True)
                continue
            try:
                said = steer(paths, str(action), str(text or ""), now=bool(now), source=str(source or "cli"))
                print(f"✋ {self.story}: {said}", flush=True)
            except RalphError as refused:  # an answer with no question waiting: said on the worker's screen
                print(f"✋ {self.story}: {refused}", flush=True)

    def report(self, status: dict[str, Any]) -> None:
        """What the loop has spent so far (its status.json), told to the workflow when it changed: the run's
        budget counts the loops running, as the local coordinator counts them."""
        cost, tokens = status.get("costUsd"), status.get("tokensUsed")
        spent = (
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
            tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0,
        )
        if (
            spent != self.spent
            and self._ask(self.client.get_workflow_handle(self.workflow).signal("spent", args=[self.story, *spent]))
            is not None
        ):
            self.spent = spent

    def _ask(self, call: Coroutine[Any, Any, Any]) -> Any:
        """`call` on the worker's own event loop (this is an activity's thread); None when the server is away (the
        next heartbeat asks again)."""
        future = asyncio.run_coroutine_threadsafe(call, self.events)
        try:
            return future.result(timeout=3) or []
        except Exception as error:
            future.cancel()
            activity.logger.info("the workflow of %s not reached: %s", self.story, error)
            return None
