"""What a killed coordinator left, taken over by the next `ralph run --parallel` before it starts anything
(docs/parallel.md, "Clean-up and crash-resume"). The truth is in git and the worktrees; fleet.jsonl says which
step each story had reached:

- a child the last coordinator started that still runs (its pid *and* start time) is stopped first;
- a story its target branch marks passing was merged: only its worktree and branch are left to remove;
- a story whose loop had finished (its journal says done, or a merge was under way) goes back to the merge
  queue: a rebase cut short is aborted first;
- any other story with a worktree is started again there (the child's own start reconciles the iteration
  its kill cut short).
"""

from __future__ import annotations

import os

from ralphloop.files.read import read_json_object
from ralphloop.fleet import gitops
from ralphloop.fleet.context import FLEET_ENV, Fleet
from ralphloop.fleet.gitops import GitStep
from ralphloop.fleet.merge import collect, finish, leftovers
from ralphloop.processes import reaper
from ralphloop.state.fleet import LOOP

# The journal's steps of a story whose loop had ended 0 with its story passing, up to its merge: queued again. Its
# pass mark may be off its branch already (collected): restarting its loop would have its agent do it again.
FINISHED_STEPS = (
    "done",
    "collected",
    "merging",
    "resolving",
    "resolved",
    "landing",
    "moved",
    "requeued",
    "git failed",
)


def adopt(fleet: Fleet) -> None:
    previous = read_json_object(fleet.book.summary_path) or {}
    _stop_leftovers(fleet, previous)
    last: dict[str, str] = {}
    for entry in fleet.book.history():
        story = entry.get("story")
        if entry["event"] == "ended":  # a run that ended gives its failed stories their attempts anew
            fleet.attempts.clear()
        if not isinstance(story, str):
            continue
        last[story] = entry["event"]
        if entry["event"] == "retry" and isinstance(entry.get("attempt"), int):
            fleet.attempts[story] = entry["attempt"] + 1  # a killed run's count goes on
    passing = fleet.passing()
    for item in fleet.stories():
        story = item.id
        try:
            _adopt_one(fleet, story, item.title, last.get(story), story in passing)
        except GitStep as exc:  # this story's worktree, not the run: kept as it is, for the user to look at
            why = f"what the last run left could not be taken up ({exc})"
            fleet.failed[story] = why
            fleet.book.set(story, state="failed", note=why)
            fleet.say(f"✗ {fleet.label(story)}: {why}. Its worktree is kept: {fleet.worktree(story)}")
    fleet.book.write(queue=list(fleet.queue))


def _adopt_one(fleet: Fleet, story: str, title: str, step: str | None, merged: bool) -> None:
    tree = fleet.worktree(story)
    has_tree = os.path.isdir(tree) and gitops.head_of(tree, "HEAD") is not None
    has_branch = gitops.head_of(fleet.root, f"refs/heads/{fleet.branch(story)}") is not None
    if not has_tree and not has_branch:
        return
    fleet.book.set(story, title=title, branch=fleet.branch(story), worktree=tree)
    if has_tree:
        gitops.abort_rebase(tree, leftovers(fleet, story))
        gitops.abort_merge(tree)
    if merged:
        fleet.say(f"· {fleet.label(story)} was merged by the last run: its worktree removed")
        finish(fleet, story, gitops.head_of(fleet.root, f"refs/heads/{fleet.target}"))
        return
    if not has_tree:
        return  # its branch alone: the next start of the story takes it up (add_worktree)
    # only a loop that ended 0 with its story passing is finished ("done" in the journal): an agent's own mark in
    # its copy, its loop killed before it verified it, is a claim its next start settles (start/recover.py)
    if step in FINISHED_STEPS:
        fleet.book.log("requeued", story=story, step=step)
        collect(fleet, story)
        fleet.collected.add(story)
        fleet.queue.append(story)
        fleet.book.set(story, state="queued")
        fleet.say(f"· {fleet.label(story)} had finished in the last run: queued to merge")
    else:
        fleet.book.log("adopted", story=story, step=step)
        fleet.say(f"· {fleet.label(story)} was cut short in the last run: started again in its worktree")


def _stop_leftovers(fleet: Fleet, previous: dict[str, object]) -> None:
    """What a killed coordinator left running, stopped: the children its fleet.json names (the kernel's parent-death
    signal should have stopped them already: this is the second guard), and every process that carries its run's
    FLEET_ENV (a merge's quality gate, the conflict's resolver, what they started), which no signal reaches."""
    run = previous.get("fleetId")
    if isinstance(run, str) and run and run != os.environ.get(FLEET_ENV):
        left = reaper.tagged_anywhere(run, FLEET_ENV)
        if left:
            reaper.stop(left, [], fleet.grace_s)
    loops = previous.get("loops")
    for item in loops if isinstance(loops, list) else []:
        if not isinstance(item, dict):
            continue
        row = LOOP.load(item)
        pid, started = row["pid"], row["pidStart"]
        if pid and started is not None and reaper.start_time(pid) == started:
            reaper.stop([pid], [pid], fleet.grace_s)
