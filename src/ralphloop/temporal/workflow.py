"""A feature's parallel run as a Temporal workflow (issue 37, docs/scale.md): the coordinator of `ralph run
--parallel N`, made durable. It keeps the story queue, the merge queue (one merge at a time: the single writer of
the feature branch), the budget, a usage window's wait and the retries; the workers run the loops and the merges
(temporal/activities.py). Its decisions are fleet/plan.py's, the same the local coordinator makes; its state is what
`ralph status` asks of it (the `fleet` query, shaped as fleet.json), and the steer commands are its signals. It
must replay the same: it reads no file, clock or process; time is workflow.now(), waits are timers."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ralphloop.core.exitcodes import ExitReason
    from ralphloop.fleet import plan
    from ralphloop.fleet.budget import child_flags, over
    from ralphloop.guards.budget import Budget
    from ralphloop.temporal.shapes import (
        END,
        MERGES,
        WORKFLOW,
        FeatureSpec,
        LoopResult,
        LoopTask,
        MergeResult,
        MergeTask,
        Prepared,
        Steer,
        StoryRow,
    )
    from ralphloop.temporal.tracked import Held, Loop, by_you, cause_of, fleet_view, iso, parsed

UNKNOWN_RESET = timedelta(minutes=30)
LINES_KEPT = 200  # the run's last lines, which a following client prints
# a loop's activity is tried again when its worker dies (its heartbeats stop) or cannot even start it; a loop that
# ran and failed is not an activity failure: the workflow decides about it, as the local coordinator does
# ralph's refusals (a bad config) are not tried again; git failing (the remote away for a while) is, for long
LOOP_RETRIES = RetryPolicy(maximum_interval=timedelta(minutes=1), maximum_attempts=30)
MERGE_RETRIES = RetryPolicy(maximum_interval=timedelta(minutes=1), maximum_attempts=0)  # a merge is never given up


@workflow.defn(name=WORKFLOW)
class FeatureRun:
    def __init__(self) -> None:
        self.spec: FeatureSpec | None = None
        self.stories: list[StoryRow] = []
        self.loops: dict[str, Loop] = {}
        self.running: set[str] = set()
        self.queue: list[str] = []
        self.pending: dict[str, str] = {}
        self.failed: dict[str, str] = {}
        self.held_back: set[str] = set()
        self.slots: dict[int, str] = {}
        self.spent_cost = 0.0
        self.spent_tokens = 0
        self.merging = False
        self.held: Held | None = None
        self.asked: Steer | None = None  # the user's pause or stop of the whole run
        self.budget_stop: str | None = None
        self.lines: list[tuple[int, str]] = []
        self.said = 0
        self.status = "running"
        self.exit_reason: str | None = None
        self.exit_message: str | None = None
        self.started_at: datetime | None = None
        self.changed = False
        self.tasks: list[asyncio.Future[None]] = []  # the loops' and the merge queue's
        self.inbox: dict[str, list[tuple[int, Steer]]] = {}  # what the user asked of each running loop
        self.inbox_seq = 0
        self.loop_seq = 0
        self.live: dict[str, tuple[float, int]] = {}  # what each running loop has spent so far (`spent` signal)

    # ------------------------------------------------------------------ the run

    @workflow.run
    async def run(self, spec: FeatureSpec) -> dict[str, Any]:
        self.spec = spec
        self.started_at = workflow.now()
        try:
            prepared = await workflow.execute_activity(
                "ralph.prepare",
                spec,
                result_type=Prepared,
                task_queue=spec.queue + MERGES,
                start_to_close_timeout=timedelta(minutes=10),
                retry_policy=MERGE_RETRIES,
            )
        except ActivityError as error:
            self.exit_message = f"a worker cannot build the run: {cause_of(error)}"
            return self._end(ExitReason.ERROR)
        self._read(prepared.stories)
        self._say(f"Parallel run of {spec.feature}: {len(self.stories)} stories, merged into {spec.branch}")
        self._say(f"Up to {spec.parallel} loops at once, on the workers of queue {spec.queue}.")
        merger = asyncio.ensure_future(self._merger())
        reason = await self._coordinate()
        merger.cancel()
        return self._end(reason)

    async def _coordinate(self) -> ExitReason:
        assert self.spec is not None
        while True:
            self._check_budget()
            if self.budget_stop is not None:
                # every loop stopped as the local coordinator stops them (a Ctrl+C: its iteration recorded, its
                # attempt saved); the stories already passing still land: their work is paid for
                self._tell_running(Steer(END, "budget", iso(workflow.now())))
                await workflow.wait_condition(lambda: not self.running and not self.merging and not self.queue)
                return ExitReason.BUDGET
            held = self._held_now()
            if not held and self.asked is None:
                self._start_ready()
            end = plan.ending(
                idle=not self.merging and not self.queue,
                running=bool(self.running),
                waiting=bool(self._ready()),
                held=held,
                stop_when_held=self.spec.stop_when_held,
                asked=[self.asked.action] if self.asked is not None else [],
                outcomes=[plan.outcome(self.stories, self.failed, self.held_back)],
            )
            if end is not None:
                return end
            self.changed = False
            timeout = self._until_reset() if held else self._until_runtime()
            with contextlib.suppress(TimeoutError):  # the window reset: loops may start again
                await workflow.wait_condition(lambda: self.changed, timeout=timeout)

    def _start_ready(self) -> None:
        assert self.spec is not None
        for story, title in self._ready():
            if len(self.running) >= self.spec.parallel:
                return
            slot = plan.free_slot(self.spec.parallel, self.slots)
            self.slots[slot] = story
            loop = self.loops.setdefault(story, Loop(story))
            loop.title, loop.state, loop.slot, loop.note = title, "running", slot, None
            loop.started_at, loop.ended_at = iso(workflow.now()), None
            self.running.add(story)
            again = f" (attempt {loop.attempt} of {self.spec.max_attempts})" if loop.attempt > 1 else ""
            self._say(f"▶ {story} started in slot {slot}{again}")
            self.tasks.append(asyncio.ensure_future(self._run_loop(story, slot, loop.attempt)))

    async def _run_loop(self, story: str, slot: int, attempt: int) -> None:
        assert self.spec is not None and self.started_at is not None
        budget = self._budget()
        elapsed = (workflow.now() - self.started_at).total_seconds()
        limits = list(child_flags(budget, *self._spent(), elapsed))
        self.loop_seq += 1  # the loop's token: its tries share it, a new loop (or attempt) has its own
        token = f"{workflow.info().run_id[:8]}-{self.loop_seq}"
        task = LoopTask(self.spec, story, attempt, slot, limits, self.loops[story].resume, token)
        # three missed heartbeats, and never under 10 s: a busy machine's late one must not move a live loop
        heartbeat = timedelta(seconds=max(self.spec.heartbeat_s * 3, 10.0))
        try:
            result = await workflow.execute_activity(
                "ralph.loop",
                task,
                result_type=LoopResult,
                task_queue=self.spec.queue,
                start_to_close_timeout=timedelta(days=7),
                heartbeat_timeout=heartbeat,
                retry_policy=LOOP_RETRIES,
            )
        except ActivityError as error:
            self._failed(story, f"its loop could not run on a worker ({cause_of(error)})")
            return
        finally:
            self.running.discard(story)
            self.slots.pop(slot, None)
            self.inbox.pop(story, None)
            self.live.pop(story, None)  # what it spent is counted from its result from now on
            self.changed = True
        self._ended(story, result)

    def _failed(self, story: str, why: str) -> None:
        loop = self.loops[story]
        loop.state, loop.note = "failed", why
        self.failed[story] = why
        self._say(f"✗ {story}: {why}")

    def _ended(self, story: str, result: LoopResult) -> None:
        loop = self.loops[story]
        loop.worker, loop.ended_at = result.worker, iso(workflow.now())
        loop.cost_usd += result.cost_usd
        self.spent_cost += result.cost_usd
        self.spent_tokens += result.tokens
        if result.passes:
            loop.state = "queued"
            self.pending[story] = result.pending
            self.queue.append(story)
            self._say(f"✓ {story} passes in its loop on {result.worker}: queued to merge")
        elif result.exit_reason in (ExitReason.USAGE_WINDOW.value, ExitReason.USAGE_LIMIT.value):
            loop.state, loop.resume = "stopped", True  # started again after the reset, from what it pushed
            # a reset nobody said: looked at again after a while (a loop started then is held before its call)
            until = parsed(result.resets_at) or workflow.now() + UNKNOWN_RESET
            self.held = Held(result.message or "a usage window reached its cap", until)
            self._say(f"■ {self.held.message}: no new loop starts" + (f" until {result.resets_at}" if until else ""))
        elif result.code in (ExitReason.STOPPED.exit_code, 130, -2, -15):  # the user's stop, or a Ctrl+C there
            loop.state, loop.resume = "stopped", True
            self.held_back.add(story)
        else:
            said = result.message or result.exit_reason
            why = f"its loop stopped (exit {result.code}{': ' + said if said else ''})"
            self._failed(story, why if result.code else "its loop ended without its story passing")

    async def _merger(self) -> None:
        """The merge queue: one story at a time, in order of completion (the feature branch's one writer)."""
        assert self.spec is not None
        while True:
            await workflow.wait_condition(lambda: bool(self.queue))
            story = self.queue[0]
            self.merging = True
            loop = self.loops[story]
            loop.state = "merging"
            task = MergeTask(self.spec, story, loop.attempt, self.pending.get(story, ""))
            try:
                result = await workflow.execute_activity(
                    "ralph.merge",
                    task,
                    result_type=MergeResult,
                    task_queue=self.spec.queue + MERGES,
                    start_to_close_timeout=timedelta(hours=2),
                    heartbeat_timeout=timedelta(minutes=2),  # a worker dead mid-merge: tried again elsewhere
                    retry_policy=MERGE_RETRIES,
                )
            except ActivityError as error:
                result = MergeResult(story, "failed", f"its merge could not run on a worker ({cause_of(error)})")
            finally:
                self.merging = False
                self.changed = True
            self.queue.pop(0)
            self.pending.pop(story, None)
            self._merged(story, result)

    def _merged(self, story: str, result: MergeResult) -> None:
        assert self.spec is not None
        loop = self.loops[story]
        if result.stories:
            self._read(result.stories)
        if result.outcome == "merged":
            loop.state, loop.commit = "merged", result.commit
            done = sum(1 for row in self.stories if row.done)
            self._say(f"⇢ {story} merged into {self.spec.branch} ({done}/{len(self.stories)})")
        elif result.outcome == "failed":
            loop.state, loop.note = "failed", result.why
            self.failed[story] = result.why or "its merge failed"
            self._say(f"✗ {story}: {self.failed[story]}")
        else:
            loop.state, loop.note, loop.attempt = "retrying", result.why, loop.attempt + 1
            loop.resume = False  # its work saved by the merge: the next attempt starts on the new base
            self._say(f"↻ {story}: {result.why}; started again on the new base (attempt {loop.attempt})")

    # ------------------------------------------------------------------ what it decides from

    def _ready(self) -> list[tuple[str, str]]:
        busy = self.running | set(self.queue) | set(self.failed) | self.held_back
        return plan.ready(self.stories, busy)

    def _read(self, rows: list[StoryRow]) -> None:
        self.stories = rows
        for row in rows:
            loop = self.loops.setdefault(row.id, Loop(row.id))
            loop.title = row.title
            if row.done and loop.state in ("waiting", "stopped"):
                loop.state = "merged"

    def _budget(self) -> Budget:
        assert self.spec is not None
        return Budget(self.spec.max_cost_usd, self.spec.max_tokens, self.spec.max_runtime_s)

    def _check_budget(self) -> None:
        assert self.started_at is not None
        if self.budget_stop is None:
            elapsed = (workflow.now() - self.started_at).total_seconds()
            why = over(self._budget(), *self._spent(), elapsed)
            if why is not None:
                self.budget_stop = why
                self._say(f"■ Budget: {why}: no new loop starts")

    def _spent(self) -> tuple[float, int]:
        """What the run's loops spent: those that ended, and so far those running."""
        cost = self.spent_cost + sum(cost for cost, _ in self.live.values())
        return cost, self.spent_tokens + sum(tokens for _, tokens in self.live.values())

    def _until_runtime(self) -> timedelta | None:
        """Until the run's --max-runtime, which is checked then even if nothing else happens."""
        assert self.spec is not None and self.started_at is not None
        if self.spec.max_runtime_s is None:
            return None
        left = self.started_at + timedelta(seconds=self.spec.max_runtime_s) - workflow.now()
        return max(left, timedelta(seconds=1))

    def _tell_running(self, asked: Steer, story: str | None = None) -> None:
        """`asked` in the inbox of every running loop, or of `story`'s (its worker applies it at its heartbeat)."""
        for each in sorted(self.running) if story is None else [story] if story in self.running else []:
            self.inbox_seq += 1
            self.inbox.setdefault(each, []).append((self.inbox_seq, asked))

    def _held_now(self) -> bool:
        if self.held is None:
            return False
        if self.held.until is not None and workflow.now() >= self.held.until:
            self._say("■ the usage window reset: loops start again")
            self.held = None
            return False
        return True

    def _until_reset(self) -> timedelta | None:
        if self.held is None or self.held.until is None:
            return None
        return max(self.held.until - workflow.now(), timedelta(seconds=1))

    def _end(self, reason: ExitReason) -> dict[str, Any]:
        outcome = plan.outcome(self.stories, self.failed, self.held_back)
        own = reason if reason is ExitReason.ERROR else plan.own_reason(reason, outcome)
        self.status, self.exit_reason = own.status, own.value
        failures = "; ".join(f"{story}: {why}" for story, why in self.failed.items()) or None
        held = self.held.message if own is ExitReason.USAGE_WINDOW and self.held is not None else None
        self.exit_message = self.exit_message or (self.budget_stop if own is ExitReason.BUDGET else failures or held)
        assert self.spec is not None
        merged, total = sum(1 for row in self.stories if row.done), len(self.stories)
        if total and merged == total:
            self._say(f"All {total} stories merged into {self.spec.branch}.")
        else:
            said = f" ({self.exit_message})" if self.exit_message else ""
            self._say(f"Stopped ({own.value}): {merged}/{total} stories merged into {self.spec.branch}{said}.")
        return self.fleet()

    def _say(self, text: str) -> None:
        self.said += 1
        self.lines.append((self.said, text))
        del self.lines[:-LINES_KEPT]

    # ------------------------------------------------------------------ signals and queries

    @workflow.signal(name="steer")
    def steer(self, asked: Steer) -> None:
        """The user's request (`ralph pause|resume|stop|say|answer` on Temporal, cli/temporal_steer.py): the whole
        run's pause or stop held here (no new loop starts), and the request put in the inbox of each running loop
        it is for, which that loop's worker applies to the loop's own control.json (state/steer.py)."""
        if asked.action == END:
            return  # the workflow's own, never the user's
        self._tell_running(asked, asked.story)
        if asked.story is not None:
            return
        if asked.action == "resume":
            if self.asked is not None and self.asked.action == "pause":
                self.asked = None
                self._say("✋ resumed: loops start again")
        elif asked.action in ("pause", "stop") and (self.asked is None or asked.action == "stop"):
            self.asked = asked
            then = "no new loop starts"
            if asked.action == "stop":
                then += "; the running ones end after their iteration"
            self._say(f"✋ {by_you(asked)}: {then}")
        self.changed = True

    @workflow.query(name="fleet")
    def fleet(self) -> dict[str, Any]:
        """The run as fleet.json shapes it (state/fleet.py), which `ralph status` and the monitor word."""
        assert self.spec is not None
        return fleet_view(
            self.spec,
            workflow.info().workflow_id,
            workflow.now(),
            {"status": self.status, "exitReason": self.exit_reason, "exitMessage": self.exit_message},
            self.started_at,
            list(self.loops.values()),
            self.queue,
            self.stories,
            held=self.held,
            asked=self.asked,
            spent=self._spent(),
        )

    @workflow.signal(name="spent")
    def spent(self, story: str, cost: float, tokens: int) -> None:
        """What a running loop has spent so far (its worker tells it each heartbeat it changed)."""
        if story in self.running:
            self.live[story] = (float(cost), int(tokens))
            self.changed = True

    @workflow.query(name="inbox")
    def inbox_of(self, story: str, after: int) -> list[list[Any]]:
        """What the user asked of `story`'s running loop since `after` (its worker asks each heartbeat)."""
        return [
            [number, asked.action, asked.text, asked.now, asked.source]
            for number, asked in self.inbox.get(story, [])
            if number > after
        ]

    @workflow.query(name="lines")
    def lines_after(self, after: int) -> list[list[Any]]:
        """The run's lines numbered after `after` (a following client asks with the last it printed)."""
        return [[number, text] for number, text in self.lines if number > after]
