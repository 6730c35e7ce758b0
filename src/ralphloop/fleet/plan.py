"""The coordinator's decisions, pure (issue 37: one coordinator logic, two launchers): which stories are ready and in
what order, which loop to start next in which slot, when the run is over and with what reason. The local
coordinator (fleet/coordinator.py) asks them of its files and handles; the Temporal workflow (temporal/workflow.py)
asks them of its own state, which must be deterministic. Nothing here reads a file, a clock or a process."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from ralphloop.core.exitcodes import ExitReason

# the stops that are the whole run's, not each feature's own outcome
RUN_WIDE = (ExitReason.INTERRUPTED, ExitReason.BUDGET, ExitReason.USAGE_WINDOW, ExitReason.STOPPED)


class StoryLike(Protocol):
    """What the plan reads of a story (core/file_task.FileTask, or the workflow's copy of one)."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def done(self) -> bool: ...

    @property
    def priority(self) -> int: ...

    @property
    def depends_on(self) -> Sequence[str]: ...


def ready(stories: Iterable[StoryLike], busy: Collection[str]) -> list[tuple[str, str]]:
    """The stories a loop may start now, highest priority first, as (id, title): not passing, not busy (running,
    queued, failed or held back), and every story they depend on passing on the target."""
    stories = list(stories)
    passing = {story.id for story in stories if story.done}
    found = []
    for story in sorted(stories, key=lambda story: story.priority):
        if story.id in passing or story.id in busy:
            continue
        if all(need in passing for need in story.depends_on):
            found.append((story.id, story.title))
    return found


def free_slot(parallel: int, taken: Collection[int]) -> int:
    """The lowest slot not taken (a loop's ports and its line on the screen are its slot's)."""
    return min(set(range(parallel)) - set(taken))


def outcome(stories: Iterable[StoryLike], failed: Collection[str], held_back: Collection[str]) -> ExitReason:
    """A feature's own outcome once nothing runs: complete, stopped by the user, failed, or blocked."""
    if all(story.done for story in stories):
        return ExitReason.COMPLETE
    if held_back and not failed:  # stories whose loop the user stopped (`ralph stop --story`)
        return ExitReason.STOPPED
    return ExitReason.RETRIES_EXHAUSTED if failed else ExitReason.BLOCKED


def ending(
    *,
    idle: bool,
    running: bool,
    waiting: bool,
    held: bool,
    stop_when_held: bool,
    asked: Collection[str],
    outcomes: Collection[ExitReason],
) -> ExitReason | None:
    """Whether the run is over, and why (None: it goes on). `idle`: no merge under way or queued; `running`: a
    loop runs; `waiting`: a story is ready; `held`: no loop may start (a cap on a usage window); `asked`: the
    user's pause or stop in force, each feature's action; `outcomes`: each feature's own outcome."""
    if running or not idle:
        return None
    if held and stop_when_held and waiting:
        return ExitReason.USAGE_WINDOW  # --on-usage-limit exit: stories are ready, and no loop may start
    if asked and all(action == "stop" for action in asked):
        return ExitReason.STOPPED
    if waiting or asked:
        return None
    if set(outcomes) == {ExitReason.COMPLETE}:
        return ExitReason.COMPLETE
    for reason in (ExitReason.RETRIES_EXHAUSTED, ExitReason.STOPPED):  # a failure first, then the user's stop
        if reason in outcomes:
            return reason
    return ExitReason.BLOCKED


def own_reason(run: ExitReason, feature: ExitReason) -> ExitReason:
    """What one feature's records say the run ended at: the run's own stop, else the feature's outcome."""
    return run if run in RUN_WIDE else feature
