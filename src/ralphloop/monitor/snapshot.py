"""Everything the monitor shows, read from a feature's state files in one pass (never from the engine).

Every reader tolerates a missing, half-written or hostile file: the monitor shows what it can and
waits for the next change. Agent-written text is cleaned of escapes when it is drawn (views.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ralphloop.agents.log_tail import log_tail, own_log
from ralphloop.files.read import lock_holder_alive, read_json_object, read_tail_lines
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.fleet import fleet_paths, loop_feature_paths, read_fleet_noted
from ralphloop.state.report import gather

_SIGNAL_ARRAYS = (
    ("done_signals", "done"),
    ("completion_indicators", "completion"),
    ("test_only_loops", "test-only"),
    ("blocked_loops", "blocked"),
    ("question_loops", "questions"),
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The monitor's view of one feature at one moment."""

    now: datetime
    report: dict[str, Any] | None  # `ralph status --json`'s report; None before any run wrote status.json
    signals: dict[str, int] = field(default_factory=dict)  # exit-signal counts over the recent iterations
    events: list[dict[str, str]] = field(default_factory=list)  # {time, level, text}, oldest first
    log_name: str = ""
    log_lines: list[str] = field(default_factory=list)
    damaged: bool = False  # status.json is there but holds no JSON object (a run rewrites it)
    fleet: dict[str, Any] | None = None  # a parallel run's (state/fleet.read_fleet), when the feature has one
    fleet_note: str | None = None  # why a fleet.json there is not read (not a regular file, damaged)
    resume: str = ""  # the command that adopts a stopped fleet

    @property
    def started(self) -> bool:
        return self.report is not None or self.fleet is not None

    @property
    def shows_fleet(self) -> bool:
        """The fleet is the view, unless a single loop runs now beside an earlier parallel run's records."""
        alive = self.report is not None and self.report["alive"]
        return self.fleet is not None and (self.fleet["alive"] or not alive)

    @property
    def ended(self) -> bool:
        """The run is over: no process holds the lock and status.json says how it ended (a fleet: its coordinator
        holds its lock no more)."""
        if self.shows_fleet:
            return not (self.fleet or {}).get("alive")
        return self.report is not None and not self.report["alive"] and self.report["status"] != "not started"

    @property
    def run_id(self) -> str | None:
        """Which run status.json describes (its PID and start), to tell an earlier run's leftovers apart."""
        return run_id(self.report) if self.report is not None else None


def run_id(status: dict[str, Any]) -> str:
    return f"{status.get('runPid')}@{status.get('startedAt')}"


FleetReader = Callable[[FeaturePaths], tuple[dict[str, Any] | None, str | None]]


def read_snapshot(
    paths: FeaturePaths, now: datetime, *, events: int = 8, log_lines: int = 12, fleets: FleetReader = read_fleet_noted
) -> Snapshot:
    """What the monitor shows now. `fleets` reads the parallel run: its fleet.json, or (issue 37) its workflow on
    Temporal, which the CLI hands in (the monitor imports no client)."""
    fleet, note = fleets(paths)
    resume = paths.command("run", "--parallel", str(fleet["parallel"])) if fleet is not None else ""
    status = read_json_object(paths.status)
    if status is None:
        recent = read_recent(paths.events, events) if fleet is not None else []
        damaged = os.path.lexists(paths.status)
        return Snapshot(
            now=now, report=None, events=recent, damaged=damaged, fleet=fleet, fleet_note=note, resume=resume
        )
    report = gather(paths, strict=False)
    report["runPid"] = status.get("pid")
    report["agent"] = status.get("agent")
    log_path = own_log(paths, report.get("logFile"))
    return Snapshot(
        now=now,
        report=report,
        signals=signal_counts(read_json_object(paths.exit_signals) or {}),
        events=read_recent(paths.events, events),
        log_name=os.path.basename(log_path),
        log_lines=log_tail(log_path, log_lines, str(status.get("agent") or "")) if log_path else [],
        fleet=fleet,
        fleet_note=note,
        resume=resume,
    )


def fleet_files(paths: FeaturePaths, fleet: dict[str, Any] | None) -> tuple[str, ...]:
    """The files whose change the monitor watches for a fleet: fleet.json, the coordinator's lock, each loop's own
    status.json and lock (where its records are now)."""
    found = list(fleet_paths(paths)[::2])
    for loop in (fleet or {}).get("loops") or []:
        where = loop_feature_paths(paths, loop)
        if where is not None:
            found += [where.status, where.lock]
    return tuple(found)


def ended_fleet(paths: FeaturePaths, fleets: FleetReader = read_fleet_noted) -> str | None:
    """The id of the feature's fleet when its coordinator is over (`--wait` waits past it); None otherwise."""
    fleet, _ = fleets(paths)
    return fleet_id(fleet) if fleet is not None and not fleet["alive"] else None


def fleet_id(fleet: dict[str, Any]) -> str:
    return f"{fleet.get('fleetId')}@{fleet.get('startedAt')}"


def signal_counts(data: dict[str, Any]) -> dict[str, int]:
    """How many recent iterations gave each kind of exit evidence (.exit_signals arrays)."""
    counts = {label: len(data[name]) for name, label in _SIGNAL_ARRAYS if isinstance(data.get(name), list)}
    if isinstance(data.get("refused_claims"), list):
        counts["refused"] = len(data["refused_claims"])
    return counts


def ended_run(paths: FeaturePaths) -> str | None:
    """The id of the run status.json describes when that run is over (no process holds the lock)."""
    status = read_json_object(paths.status)
    if status is None or lock_holder_alive(paths.lock) is not None:
        return None
    return run_id({"runPid": status.get("pid"), "startedAt": status.get("startedAt")})


def read_recent(path: str, count: int, *, tail_bytes: int = 64 * 1024) -> list[dict[str, str]]:
    """The last `count` events of the log, oldest first; malformed lines are skipped."""
    lines = read_tail_lines(path, tail_bytes) or []
    found: list[dict[str, str]] = []
    for raw in reversed(lines):
        if len(found) >= count:
            break
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            found.append({key: str(item.get(key) or "") for key in ("time", "level", "text")})
    return found[::-1]
