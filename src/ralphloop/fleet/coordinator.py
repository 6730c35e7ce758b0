"""The coordinator of `ralph run --parallel N` (docs/parallel.md): it starts a child loop for each ready story (up
to N at once, each in its own worktree on its own branch), takes each finished story through the merge queue
one at a time in order of completion, and is the only writer of the pass marks. It adopts what a killed
coordinator left (fleet/adopt.py) before it starts anything."""

from __future__ import annotations

import contextlib
import os
import select
import threading

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import iso
from ralphloop.files.read import read_json_object
from ralphloop.fleet import gitops, plan, steering
from ralphloop.fleet.adopt import adopt
from ralphloop.fleet.context import Fleet
from ralphloop.fleet.merge import merge_one

TICK_S = 0.2  # how often the children are polled: their own loops do the waiting


def coordinate(fleets: list[Fleet]) -> ExitReason:
    """Run every feature's fleet to its end, N loops in all: the run's reason (each fleet's own in its fleet.json).
    The merge queue runs on a thread of its own, so that a long merge (its quality gates) never keeps a finished
    loop's slot from being filled."""
    steering.forget_stop(fleets)
    for fleet in fleets:
        fleet.book.write(status="running", storiesTotal=len(fleet.stories()), storiesMerged=len(fleet.passing()))
        adopt(fleet)
    merger = Merger(fleets)
    merger.start()
    try:
        reason = _loop(fleets, merger)
        reason = ExitReason.STOPPED if reason is ExitReason.INTERRUPTED and steering.stopped_now(fleets) else reason
    finally:
        _stop_all(fleets)  # every loop stops at once (each its grace, not one after the other)
        if _stopped_early(fleets):
            fleets[0].cancel.set()  # a merge's gates are stopped too
        merger.finish()
    for fleet in fleets:
        own = plan.own_reason(reason, _outcome(fleet))
        fleet.bring_in = fleet.bring_in_now()
        fleet.book.write(
            bringIn=fleet.bring_in,
            status=own.status,
            exitReason=own.value,
            storiesMerged=len(fleet.passing()),
            queue=list(fleet.queue),
            exitMessage=_stop_message(fleet, own),
        )
        fleet.book.log("ended", reason=own.value)
    return reason


def _loop(fleets: list[Fleet], merger: Merger) -> ExitReason:
    lead = fleets[0]  # the clock and the Ctrl+C token are the run's, shared by every fleet
    while True:
        merger.check()
        if lead.cancel.is_set():
            return ExitReason.INTERRUPTED
        for fleet in fleets:
            if _poll(fleet):
                merger.wake.set()
        if lead.spending is not None and (why := lead.spending.over(lead.clock.monotonic())):
            lead.spending.stopped = why
            lead.say(f"■ Budget: {why}: every loop is stopped")
            return ExitReason.BUDGET
        held, asked = _held(fleets), steering.asked(fleets)  # a cap on a window; the user's pause or stop
        if held is None:
            _start_ready([fleet for fleet in fleets if fleet.paths.name not in asked])
        end = plan.ending(
            idle=not merger.busy and not any(fleet.queue for fleet in fleets),  # a merge calls no agent: never held
            running=any(fleet.handles for fleet in fleets),
            waiting=any(_ready(fleet) for fleet in fleets),
            held=held is not None,
            stop_when_held=lead.stop_when_held,
            asked=[request.action for request in asked.values()],
            outcomes={_outcome(fleet) for fleet in fleets},
        )
        if end is not None:
            return end
        _wait(fleets, merger)


def _held(fleets: list[Fleet]) -> UsageLimit | None:
    """Why no new loop may start: the agent accounts are past the user's cap on a usage window (the loops running
    go on: each is held before its own next call). Told once, and kept in fleet.json while it holds."""
    lead = fleets[0]
    held = lead.held(lead.clock.now()) if lead.held is not None else None
    said = {"message": held.message, "until": iso(held.resets_at) if held.resets_at else None} if held else None
    if said != lead.book.fleet.get("held"):
        if held is not None:
            then = "every loop is stopped when the running ones end" if lead.stop_when_held else "no new loop starts"
            lead.say(f"■ {held.message}: {then}")
        for fleet in fleets:
            with fleet.book.lock:
                fleet.book.write(held=said)
    return held


def _wait(fleets: list[Fleet], merger: Merger) -> None:
    """Until a loop ends (its process's pidfd), a merge is done, Ctrl+C, or a tick."""
    lead = fleets[0]
    fds = [lead.cancel.fileno(), merger.done_fd]
    fds += [fd for fleet in fleets for handle in fleet.handles.values() if (fd := handle.fileno()) is not None]
    with contextlib.suppress(InterruptedError, ValueError, OSError):
        select.select(fds, [], [], TICK_S)
    lead.cancel.quiet()
    merger.drain()


class Merger(threading.Thread):
    """The merge queue's thread: one story at a time per feature, in order of completion."""

    def __init__(self, fleets: list[Fleet]) -> None:
        super().__init__(name="ralph-merge-queue", daemon=True)
        self.fleets = fleets
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.busy = True  # until it has looked at the queues once
        self.error: BaseException | None = None
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.done_fd = self._read

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                self.busy = True
                if _merge_next(self.fleets):
                    with contextlib.suppress(OSError):
                        os.write(self._write, b"m")  # the coordinator's loop: a merge may have made stories ready
                    continue
                self.busy = False
                self.wake.wait(TICK_S)
                self.wake.clear()
        except BaseException as exc:  # handed to the coordinator's thread, which raises it
            self.error = exc
            self.busy = False

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            os.read(self._read, 4096)

    def finish(self) -> None:
        """Stop after the merge under way (its gates are stopped by Ctrl+C's token)."""
        self.stopping.set()
        self.wake.set()
        self.join()
        os.close(self._read)
        os.close(self._write)


def _merge_next(fleets: list[Fleet]) -> bool:
    """One story through each fleet's queue (each feature's target is its own); whether any was."""
    merged = False
    for fleet in fleets:
        if not fleet.queue or fleet.cancel.is_set():
            continue
        story = fleet.queue[0]
        outcome = merge_one(fleet, story)
        if outcome == "cancelled":
            continue  # adopted by the next run; nothing moved, so the queue waits a tick rather than trying again
        merged = True
        if outcome == "moved":
            continue  # rebased again on the target's new tip, next time round
        fleet.queue.pop(0)
        if outcome == "merged":
            done, total = len(fleet.passing()), len(fleet.stories())
            fleet.say(f"⇢ {fleet.label(story)} merged into {fleet.target} ({done}/{total})")
        _publish(fleet)
    return merged


def _outcome(fleet: Fleet) -> ExitReason:
    return plan.outcome(fleet.stories(), fleet.failed, fleet.held_back)


def _poll(fleet: Fleet) -> bool:
    """Children that ended: done (queued to merge), or failed (kept for inspection); whether one was queued."""
    queued = False
    for story, handle in list(fleet.handles.items()):
        code = handle.poll()
        if code is None:
            continue
        del fleet.handles[story]
        _free(fleet, story)
        if fleet.spending is not None:
            fleet.spending.end_of(fleet, story, handle.pid)
        if code == 0 and fleet.passes_in_worktree(story):
            fleet.book.log("done", story=story, head=gitops.head_of(fleet.worktree(story), "HEAD"))
            fleet.book.set(story, state="queued", pid=None, endedAt=fleet.book.now())  # before the queue has it
            fleet.queue.append(story)  # collected in the queue's turn: a freed slot is filled first
            queued = True
            fleet.say(f"✓ {fleet.label(story)} passes in its loop: queued to merge")
        elif (
            fleet.cancel.is_set()
            or code in (130, -2, -15)
            or _stopped_at_a_cap(fleet, story, code)
            or (steering.stopped_by_you(fleet, story, code))
        ):
            # stopped, or held by a usage window's cap: the story is worked again once the window resets
            fleet.book.set(story, state="stopped", pid=None, endedAt=fleet.book.now())
        else:
            why = _child_reason(fleet, story, code)
            fleet.failed[story] = why
            fleet.book.log("failed", story=story, why=why)
            fleet.book.set(story, state="failed", note=why, pid=None, endedAt=fleet.book.now())
            fleet.say(f"✗ {fleet.label(story)}: {why}. Its worktree is kept: {fleet.worktree(story)}")
        _publish(fleet)
    return queued


def _start_ready(fleets: list[Fleet]) -> None:
    """Start the ready stories (every dependsOn passing on the target), highest priority first, the features in
    turn, up to N loops in all."""
    queues = [_ready(fleet) for fleet in fleets]
    while any(queues) and sum(len(fleet.handles) for fleet in fleets) < fleets[0].parallel:
        for fleet, ready in zip(fleets, queues, strict=True):
            if ready and sum(len(each.handles) for each in fleets) < fleet.parallel:
                sid, title = ready.pop(0)
                _start(fleet, sid, title)
    for fleet in fleets:
        _publish(fleet)


def _ready(fleet: Fleet) -> list[tuple[str, str]]:
    # what is busy is read before the stories: the merge queue's thread marks a story merged (the target moved)
    # before it leaves the queue, so a story is always either busy here or passing in what is read after
    busy = set(fleet.handles) | set(fleet.queue) | set(fleet.failed) | fleet.held_back
    return plan.ready(fleet.stories(), busy)


def _start(fleet: Fleet, story: str, title: str) -> None:
    slot = plan.free_slot(fleet.parallel, fleet.slots)
    fleet.slots[slot] = fleet.label(story)
    tree, branch = fleet.worktree(story), fleet.branch(story)
    tip = gitops.tip_of(fleet.root, fleet.target)
    attempt = fleet.attempts.setdefault(story, 1)
    fleet.book.log("starting", story=story, branch=branch, worktree=tree, base=tip, attempt=attempt, slot=slot)
    gitops.add_worktree(fleet.root, tree, branch, tip)
    limits = fleet.spending.child_flags(fleet.clock.monotonic()) if fleet.spending is not None else ()
    handle = fleet.launcher.start(fleet.loop_spec(story, slot, limits))
    fleet.handles[story] = handle
    pid = handle.pid
    fleet.book.log("started", story=story, pid=pid, pid_start=handle.started)
    loop_paths = fleet.loop_paths(story)
    fleet.book.set(
        story,
        title=title,
        state="running",
        slot=slot,
        attempt=attempt,
        maxAttempts=fleet.max_attempts,
        branch=branch,
        worktree=tree,
        featureDir=loop_paths.dir,
        pid=pid,
        pidStart=handle.started,
        startedAt=fleet.book.now(),
        endedAt=None,
    )
    again = f" (attempt {attempt} of {fleet.max_attempts})" if attempt > 1 else ""
    fleet.say(f"▶ {fleet.label(story)} started in slot {slot}{again}")


def _stop_all(fleets: list[Fleet]) -> None:
    """Every loop still running told to stop (as on Ctrl+C: it records its iteration), then each waited for."""
    for fleet in fleets:
        for handle in fleet.handles.values():
            handle.terminate()
    for fleet in fleets:
        for story in list(fleet.handles):
            _stop_child(fleet, story)


def _stopped_early(fleets: list[Fleet]) -> bool:
    """Whether the run stopped before its end (its budget, Ctrl+C): a merge under way need not finish its gates."""
    lead = fleets[0]
    return lead.cancel.is_set() or (lead.spending is not None and lead.spending.stopped is not None)


def _stop_child(fleet: Fleet, story: str) -> None:
    handle = fleet.handles.pop(story)
    _free(fleet, story)
    handle.stop(fleet.grace_s)
    fleet.book.set(story, state="stopped", pid=None, endedAt=fleet.book.now())
    if fleet.spending is not None:
        fleet.spending.end_of(fleet, story, handle.pid)


def _free(fleet: Fleet, story: str) -> None:
    slot = fleet.book.loop(story).get("slot")
    if isinstance(slot, int):
        fleet.slots.pop(slot, None)


def _stopped_at_a_cap(fleet: Fleet, story: str, code: int) -> bool:
    """The loop stopped at the user's cap on a usage window (its own word: status.json's exit reason)."""
    if code != ExitReason.USAGE_WINDOW.exit_code:
        return False
    status = read_json_object(fleet.loop_paths(story).status) or {}
    return status.get("exitReason") == ExitReason.USAGE_WINDOW.value


def _child_reason(fleet: Fleet, story: str, code: int) -> str:
    status = read_json_object(fleet.loop_paths(story).status) or {}
    message = status.get("exitMessage") or status.get("exitReason")
    if code == 0:
        return "its loop ended without its story passing"
    return f"its loop stopped (exit {code}{': ' + str(message) if message else ''})"


def _publish(fleet: Fleet) -> None:
    merged = len(fleet.passing())
    with fleet.book.lock:  # the queue as it is when written: the other thread writes too
        fleet.book.write(queue=list(fleet.queue), storiesMerged=merged)


def _stop_message(fleet: Fleet, reason: ExitReason) -> str | None:
    if reason is ExitReason.BUDGET and fleet.spending is not None:
        return fleet.spending.stopped
    held = fleet.book.fleet.get("held")
    if reason is ExitReason.USAGE_WINDOW and isinstance(held, dict):
        return str(held.get("message"))
    return _why(fleet)


def _why(fleet: Fleet) -> str | None:
    if not fleet.failed:
        return f"stopped by you: {', '.join(sorted(fleet.held_back))}" if fleet.held_back else None
    return "; ".join(f"{story}: {why}" for story, why in fleet.failed.items())
