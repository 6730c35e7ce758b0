"""The fleet of a parallel run (`ralph run --parallel N`, docs/parallel.md), read from its files alone:
fleet.json in the feature folder (the coordinator's atomic summary: its loops and the merge queue), and each
loop's own status.json in its worktree (or, once the worktree is removed, in `loops/<story>/` of the feature
folder). `ralph status`, the monitor and `ralph serve` read it here; kept light like state/report.py.
"""

from __future__ import annotations

import math
import os

from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive, read_json_object
from ralphloop.files.safe_read import shown_path
from ralphloop.files.schemas import Schema
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.report import gather

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FLEET_FILE = "fleet.json"
FLEET_JOURNAL = "fleet.jsonl"
FLEET_LOCK = ".fleet.lock"
LOOPS_DIR = "loops"  # a finished loop's records, kept when its worktree goes

# A loop's state, in the order a story goes through them:
#   waiting (its turn, or a dependency) · running (its child loop works) · queued (done, waiting to merge) ·
#   merging (rebased, its gates run) · merged (on the target branch, marked passing) · retrying (a conflict or a
#   gate after the rebase: started again on the new base) · failed (kept for inspection) · stopped (interrupted)
LOOP_STATES = ("waiting", "running", "queued", "merging", "merged", "retrying", "failed", "stopped")

FLEET = Schema(
    "fleet.json",
    1,
    {
        "fleetId": ("text", ""),
        "feature": ("text", ""),
        "featureDir": ("text", ""),
        "parallel": ("int", 1),
        "status": ("text", "running"),  # running · complete · halted · interrupted
        "exitReason": ("text", None),
        "exitMessage": ("text", None),
        "pid": ("int", None),
        "startedAt": ("text", None),
        "updatedAt": ("text", None),
        "target": ("text", ""),  # the branch the queue moves (the feature branch, or ralph/<feature>/integration)
        "bringIn": ("text", None),  # the command that brings an integration branch into the feature branch
        "loops": ("list", []),
        "queue": ("list", []),  # stories waiting to merge, in order of completion
        "storiesTotal": ("int", 0),
        "storiesMerged": ("int", 0),
        "resolverCostUsd": ("number", None),  # this run's calls resolving a merge conflict (merge.resolve: agent)
        "held": ("object", None),  # {message, until}: past the user's cap on a usage window, no new loop starts
        "steered": ("text", None),  # "paused by you at 14:02 (cli)": the user's pause or stop of the whole run
    },
)

LOOP = Schema(
    "fleet.json loop",
    1,
    {
        "story": ("text", ""),
        "title": ("text", ""),
        "state": ("text", "waiting"),
        "slot": ("int", None),
        "attempt": ("int", 0),
        "maxAttempts": ("int", None),
        "branch": ("text", ""),
        "worktree": ("text", ""),
        "featureDir": ("text", ""),  # the child's feature folder (in its worktree), where its status.json is
        "pid": ("int", None),
        "startedAt": ("text", None),
        "endedAt": ("text", None),
        "commit": ("text", None),  # the story's head on the target branch once merged
        "note": ("text", None),  # why it is retrying or failed
        "pidStart": ("int", None),  # the pid's start time: a pid reused since is never signalled
    },
)


def fleet_paths(paths: FeaturePaths) -> tuple[str, str, str]:
    """fleet.json, fleet.jsonl and the coordinator's lock of a feature."""
    return paths.file(FLEET_FILE), paths.file(FLEET_JOURNAL), paths.file(FLEET_LOCK)


def read_fleet(paths: FeaturePaths) -> dict[str, Any] | None:
    """The feature's fleet with each loop's own report (iteration, cost, activity...) under "report"; None when
    the feature never ran in parallel. "alive" says whether the coordinator still runs: a fleet.json that says
    running without one is "stopped" (killed: the next `ralph run --parallel` adopts it)."""
    summary, _, lock = fleet_paths(paths)
    raw = read_json_object(summary)
    if raw is None:
        return None
    fleet = FLEET.load(raw)
    holder = lock_holder_alive(lock)
    fleet["alive"] = holder is not None
    if holder:  # the lock's holder is the coordinator (0: held by a PID its file does not name)
        fleet["pid"] = holder
    if fleet["status"] == "running" and holder is None:
        fleet["status"] = "stopped"
    loops = []
    for item in fleet["loops"]:
        if not isinstance(item, dict):
            continue
        loop = LOOP.load(item)
        if loop["state"] not in LOOP_STATES:
            loop["state"] = "waiting"
        loop["report"] = _loop_report(paths, loop)
        loops.append(loop)
    fleet["loops"] = loops
    fleet["queue"] = [story for story in fleet["queue"] if isinstance(story, str)]
    costs = [cost for cost in (_cost(loop["report"]) for loop in loops) if cost is not None]
    resolver = _cost({"costUsd": fleet["resolverCostUsd"]})
    costs += [resolver] if resolver is not None else []  # what the run's budget counted: the resolver's calls too
    fleet["costUsd"] = sum(costs) if costs else None  # None: no loop's agent reports a cost (never "$0.00")
    return fleet


def read_fleet_noted(paths: FeaturePaths) -> tuple[dict[str, Any] | None, str | None]:
    """read_fleet for a view (`ralph status`, the monitor): a fleet.json or coordinator's lock that cannot be read
    (not a regular file, too big, not a JSON object) is one line saying so beside no fleet, never an error: the
    feature's own loop is still shown."""
    try:
        fleet = read_fleet(paths)
    except RalphError as exc:
        return None, f"the parallel run's fleet is not shown: {exc}"
    summary = fleet_paths(paths)[0]
    if fleet is None and os.path.lexists(summary):
        return None, f"the parallel run's fleet is not shown: {shown_path(summary)}: not a JSON object (damaged?)"
    return fleet, None


def loop_feature_paths(paths: FeaturePaths, loop: dict[str, Any]) -> FeaturePaths | None:
    """Where a loop's records are: its worktree's feature folder while it exists, else the copy kept in the
    feature's `loops/<story>/` (None when neither is there)."""
    worktree, folder = loop.get("worktree") or "", loop.get("featureDir") or ""
    if worktree and folder and os.path.isdir(folder):
        return FeaturePaths(worktree, folder)
    kept = os.path.join(paths.state_dir, LOOPS_DIR, loop_folder_name(loop.get("story") or ""))
    return FeaturePaths(os.path.dirname(kept), kept) if loop.get("story") and os.path.isdir(kept) else None


def _loop_report(paths: FeaturePaths, loop: dict[str, Any]) -> dict[str, Any] | None:
    where = loop_feature_paths(paths, loop)
    if where is None:
        return None
    try:
        return gather(where, strict=False)
    except RalphError:  # a hostile file in one loop's folder (told by that loop's own view) hides not the fleet
        return None


def _cost(report: dict[str, Any] | None) -> float | None:
    """A loop's cost this run; None when it reported none (or a hand-edited NaN, which would spoil the total)."""
    value = (report or {}).get("costUsd")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return float(value)


def loop_folder_name(story: str) -> str:
    """A story id as one folder name and branch part (ids are the task file's, `S-1` or `1.10`: never trusted as a
    path or a git option). An id that had to be changed to be one gets a short hash of itself, so that no two ids
    (`S/1` and `S_1`, `x.lock` and `x`, two long ones alike at first) ever share a worktree, branch or records."""
    cleaned = "".join(char if char.isalnum() or char in "-_." else "_" for char in story)
    cleaned = cleaned.replace("..", "__").strip(".").lstrip("-")  # git refuses "..", a leading "-" is an option
    cleaned = (cleaned[:80] or "_").removesuffix(".lock") or "_"
    if cleaned == story:
        return cleaned
    import hashlib

    # "+", which no id kept as it is holds, so a hashed name is never another id's own
    return f"{cleaned}+{hashlib.sha1(story.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
