"""What `ralph serve` shows, read from the files alone: every feature, each with its fleet (every loop and the merge
queue) or its single loop, and each loop's log tail. The same readers as `ralph status` and the monitor (a hostile
or damaged file is refused and told on the feature's error line, never followed), then every string cleaned of
terminal escapes and secrets: the agent can write most of these files, and the page shows them.

Numbers are worded here as on the other screens (words/figures.py); ages are left as times, for the page to count.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from datetime import datetime

from ralphloop.agents.log_tail import log_tail, own_log
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import shown_path
from ralphloop.project.paths import RALPH_DIR, FeaturePaths, list_features, ralph_home
from ralphloop.project.resolve import resolve_feature
from ralphloop.state.fleet import fleet_paths, loop_feature_paths, read_fleet
from ralphloop.state.report import gather
from ralphloop.state.usage_windows import BOOK
from ralphloop.words.figures import iteration_words, money
from ralphloop.words.redact import redact_value
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.words.windows import window_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    # issue 37: a parallel run on Temporal, read by the CLI (the web layer imports no client): given the feature
    # and its local fleet, the workflow's (fleet, note), or None when the feature's last run was not on Temporal
    RemoteFleet: TypeAlias = Callable[
        [FeaturePaths, dict[str, Any] | None], tuple[dict[str, Any] | None, str | None] | None
    ]

LOG_LINES = 40


@dataclass(frozen=True, slots=True)
class Features:
    """Which features to show: the ones `-f` named (resolved once), or every feature of the project, listed
    afresh each time (a feature made while the page is open appears)."""

    root: str
    named: tuple[FeaturePaths, ...] = ()
    # issue 37: the CLI's readers for a parallel run on Temporal (the web layer imports no client): its fleet, and
    # the user's request sent to its workflow (None: the feature is not on Temporal; the request is carried out here)
    fleets: RemoteFleet | None = None
    remote_steer: Callable[[FeaturePaths, str, str, bool, str | None], str | None] | None = None

    def paths(self) -> list[FeaturePaths]:
        if self.named:
            return list(self.named)
        names = list_features(self.root)
        if names:
            return [FeaturePaths(self.root, os.path.join(self.root, RALPH_DIR, name)) for name in names]
        try:
            # the one task file at the usual places, or the newest archived feature once nothing is active
            return [resolve_feature(self.root, None, command=("serve",), archived=True)]
        except RalphError:
            return []


def features(root: str, selectors: list[str]) -> Features:
    """The features to show; a one-line error for a `-f` that names none, or a project without any."""
    if selectors:
        named = (resolve_feature(root, selector, command=("serve",), archived=True) for selector in selectors)
        return Features(root, tuple(named))
    found = Features(root)
    if not found.paths():
        resolve_feature(
            root, None, command=("serve",), archived=True
        )  # raises the error `ralph status` gives ("no feature in .ralph/ ...")
    return found


def build(
    shown: list[FeaturePaths],
    now: datetime,
    fleets: RemoteFleet | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The page's snapshot, and the files it was read from (whose changes make the next one)."""
    watched: list[str] = [os.path.join(shown[0].project_root, RALPH_DIR)] if shown else []
    watched.append(os.path.join(ralph_home(), BOOK))  # the usage windows every loop of the user writes
    views = [_feature(paths, watched, fleets) for paths in shown]
    for view in views:  # each window in words (share, cap, reset), the page showing them as text
        view["windows"] = [{**window, "words": window_line(window, now)} for window in view.get("windows", [])]
    project = os.path.basename(shown[0].project_root.rstrip(os.sep)) if shown else ""
    snapshot = {"now": now.isoformat(timespec="seconds"), "project": project, "features": views}
    return redact_value(_cleaned(snapshot)), watched


def _feature(
    paths: FeaturePaths,
    watched: list[str],
    fleets: RemoteFleet | None = None,
) -> dict[str, Any]:
    summary, _, lock = fleet_paths(paths)
    watched += [summary, lock, *_own_files(paths)]
    view: dict[str, Any] = {"name": paths.name, "dir": paths.display(), "errors": [], "fleet": None, "loops": []}
    view["archived"] = paths.is_archived  # shown once nothing is active: the page says where it was moved
    try:
        fleet = read_fleet(paths)
    except RalphError as exc:  # a FIFO, a link, a huge file where fleet.json belongs: said, not followed
        fleet = None
        view["errors"].append(str(exc))
    else:
        if fleet is None and os.path.lexists(summary):
            view["errors"].append(f"{shown_path(summary)}: not a JSON object (damaged?)")
        remote = fleets(paths, fleet) if fleets is not None else None  # a newer run on Temporal: its workflow's
        if remote is not None:
            fleet, note = remote
            view["errors"] += [note] if note else []
    if fleet is not None:
        return _fleet(paths, fleet, view, watched)
    try:
        report = gather(paths, strict=False)
    except RalphError as exc:
        view["errors"].append(str(exc))
        view["status"] = "unreadable"
        return view
    view.update(
        status=report["status"],
        alive=report["alive"],
        done=_count(report["storiesComplete"]),
        total=_count(report["storiesTotal"]),
        cost=_money(report["costUsd"]),
        message=report["exitMessage"] or report["note"],
        windows=report["windows"],
    )
    log = own_log(paths, report["logFile"])
    watched.append(log)
    if report["status"] == "not started":
        return view  # no loop yet to show
    view["loops"] = [
        {
            "story": report["currentStory"] or "",
            "title": "",
            "state": report["status"],
            **_loop_facts(report),
            "log": _log(log, report),
        }
    ]
    return view


def _fleet(paths: FeaturePaths, fleet: dict[str, Any], view: dict[str, Any], watched: list[str]) -> dict[str, Any]:
    view.update(
        status=fleet["status"],
        alive=fleet["alive"],
        done=_count(fleet["storiesMerged"]),
        total=_count(fleet["storiesTotal"]),
        cost=_money(fleet["costUsd"]),
        message=fleet["exitMessage"],
    )
    held = fleet.get("held")  # past a cap on a usage window: no new loop starts (fleet/coordinator.py)
    view["held"] = held.get("message") if isinstance(held, dict) else None
    view["steered"] = fleet.get("steered") if fleet["status"] == "running" else None  # the user's pause or stop
    view["fleet"] = {
        "parallel": fleet["parallel"],
        "target": fleet["target"],
        "bringIn": fleet["bringIn"],
        "queue": fleet["queue"],
    }
    for loop in fleet["loops"]:
        report = loop["report"] or {}
        where = loop_feature_paths(paths, loop)
        log = own_log(where, report.get("logFile")) if where is not None else ""
        if where is not None:
            watched += [*_own_files(where), log]
        view["loops"].append(
            {
                "story": loop["story"],
                "title": loop["title"],
                "state": loop["state"],
                "attempt": loop["attempt"],
                "maxAttempts": loop["maxAttempts"],
                "slot": loop["slot"],
                "branch": loop["branch"],
                "note": loop["note"],
                **_loop_facts(report),
                "log": _log(log, report),
            }
        )
        for window in report.get("windows") or ():  # the loops share their accounts: each window once
            if not any(_same(window, seen) for seen in view.setdefault("windows", [])):
                view["windows"].append(window)
    return view


def _same(one: dict[str, Any], other: dict[str, Any]) -> bool:
    return (one.get("account"), one.get("window")) == (other.get("account"), other.get("window"))


def _loop_facts(report: dict[str, Any]) -> dict[str, Any]:
    """A loop's own numbers and doings, from its status report ({} before its first iteration)."""
    if not report:
        return {
            "iteration": None,
            "cost": None,
            "activity": None,
            "inIteration": False,
            "lastOutputAt": None,
            "alive": False,
        }
    number = _count(report.get("iteration"))
    running = report.get("inIteration") is True
    words = iteration_words(
        number,
        _count(report.get("iterationsCounted")),
        _count(report.get("callsNotCounted")),
        _count(report.get("maxIterations")) or None,
        running=running,
    )
    waiting = report.get("waiting")
    doing = waiting.get("message") if isinstance(waiting, dict) else report.get("activity")
    return {
        "iteration": words if number else None,
        "cost": _money(report.get("costUsd")),
        "activity": doing or None,
        # while an iteration goes on, the agent's last output (null: none yet): what shows a stuck agent
        "inIteration": running,
        "lastOutputAt": report.get("lastOutputAt") if running else None,
        "alive": report.get("alive") is True,  # a `ralph run` holds its lock: the page's controls steer it
    }


def _log(path: str, report: dict[str, Any]) -> dict[str, Any]:
    if not path:
        return {"name": "", "lines": []}
    return {"name": os.path.basename(path), "lines": log_tail(path, LOG_LINES, str(report.get("agent") or ""))}


def _own_files(paths: FeaturePaths) -> list[str]:
    """The files a loop's report is read from (prd.json: the counts; the lock: whether it runs; control.json: what
    the user asked of it, shown once the loop acts on it)."""
    return [paths.status, paths.state, paths.circuit_state, paths.lock, paths.journal, paths.prd, paths.control]


def _money(value: object) -> str | None:
    """A cost as every screen words it; None for what is not one (a hand-edited file's NaN, a negative)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        return None
    return money(float(value))


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _cleaned(value: Any) -> Any:
    """Every string without terminal escapes or controls (tabs and newlines stay): before the secrets are
    masked, so that an escape inside a key cannot hide it from the mask."""
    if isinstance(value, str):
        return strip_terminal_controls(value)
    if isinstance(value, dict):
        return {key: _cleaned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value
