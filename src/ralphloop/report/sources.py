"""What `ralph report` reads: the metrics file (whole; an error there is the command's error), the event log's
two generations for the waits (optional: a refused or missing log only leaves the waits out, with a warning),
the feature's format (its words), and for the page a run's cost budget from the config. After a parallel run
(docs/parallel.md) the same of every loop too: the records kept in `loops/<story>/`, and those still in a loop's
worktree (running, or failed and kept), so that the report is the whole feature's.

Light at import (json, os): the config and its YAML are imported only by `budget`, which only --html calls.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object, read_tail_lines
from ralphloop.plugins.formats import detect, format_of
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.records.metrics import METRICS_NAME, RESOLVE_OUTCOME, read_metrics
from ralphloop.report.receipt import Receipt, Wait, assemble, waits
from ralphloop.state.fleet import FLEET_FILE, LOOPS_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENTS_TAIL = 16 * 1024 * 1024  # an event log is rotated past 1 MB when a run starts; one long run may pass it


@dataclass(frozen=True, slots=True)
class Gathered:
    """A feature's receipt and what was read to make it, as the user names the files."""

    feature: str
    metrics_file: str  # absolute
    shown: str  # as the user would type it
    receipt: Receipt
    skipped: list[tuple[int, str]]  # metrics lines cut short by a crash: (line number, why)
    warnings: list[str]
    done_word: str  # "passes" for stories, "done" for tasks and steps
    units: str  # "Stories", "Tasks", "Steps"
    run_budget: tuple[bool, float | None] = (False, None)  # (recorded?, the latest run's max_cost_usd)


def gather(paths: FeaturePaths) -> Gathered:
    """The receipt of the feature at `paths`; RalphError naming the metrics file when it cannot be read."""
    metrics_file = paths.file(METRICS_NAME)
    shown = display_path(metrics_file, os.getcwd())
    loops, left_out = loop_records(paths)
    own = not loops or os.path.lexists(metrics_file)  # a feature only ever run in parallel: its loops hold it all
    sources = [(metrics_file, paths.events), *loops] if own else loops
    lines: list[dict[str, Any]] = []
    skipped: list[tuple[int, str]] = []
    warnings: list[str] = [left_out] if left_out else []
    found: list[Wait] = []
    now = datetime.now(UTC)
    read_from: list[str] = []
    for metrics, events_file in sources:
        named = display_path(metrics, os.getcwd())
        if loops and not os.path.lexists(metrics):
            continue  # a loop that has not finished an iteration
        read = read_metrics(named)  # errors name the file as the user sees it
        read_from.append(metrics)
        lines += read.lines
        here = "" if metrics == metrics_file else f"{named}: "
        skipped += [(number, here + reason) for number, reason in read.skipped]
        warnings += [f"{named}:{number}: skipped {reason}" for number, reason in read.skipped]
        events, problem = read_events(events_file)
        if problem:
            warnings.append(f"{problem} (the timeline shows no waits)")
        found += waits(events, now)
    if not read_from:
        read_metrics(shown)  # the error a feature with no records at all gets
    theirs = [metrics for metrics in read_from if metrics != metrics_file]
    if theirs:  # the loops' lines interleave in time; stable: a file's order stays within a second
        lines.sort(key=lambda line: stamp if isinstance(stamp := line.get("timestamp"), str) else "")
        kept = paths.file(LOOPS_DIR)
        in_kept = sum(1 for metrics in theirs if metrics.startswith(kept + os.sep))
        places = [f"{in_kept} in {display_path(kept, os.getcwd())}/"] if in_kept else []
        places += [f"{len(theirs) - in_kept} in their worktrees"] if len(theirs) > in_kept else []
        said = f"the records of {len(theirs)} parallel loop(s) ({', '.join(places)})"
        shown = f"{shown} and {said}" if own else said
    row = format_of(detect(paths.dir))
    return Gathered(
        feature=paths.name,
        metrics_file=metrics_file,
        shown=shown,
        receipt=assemble(lines, found),
        skipped=skipped,
        warnings=warnings,
        done_word="passes" if row.done_words == "stories pass" else "done",
        units=row.units,
        run_budget=recorded_budget(lines),
    )


def loop_records(paths: FeaturePaths) -> tuple[list[tuple[str, str]], str | None]:
    """(metrics file, event log) of each loop a parallel run of the feature had: its records kept in
    `loops/<story>/` once its worktree went, or still in the worktree of a loop not merged (fleet.json: running,
    or failed and kept), each folder once however it is named. Empty for a feature never run in parallel. With
    them, why the worktrees' records are left out when fleet.json cannot be read (a warning, not the report's
    error: the records kept in loops/ are still read)."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(where: FeaturePaths) -> None:
        real = os.path.realpath(where.state_dir)
        if real not in seen:
            seen.add(real)
            found.append((where.file(METRICS_NAME), where.events))

    kept = paths.file(LOOPS_DIR)
    try:
        names = sorted(os.listdir(kept))
    except OSError:
        names = []
    for name in names:
        folder = os.path.join(kept, name)
        if os.path.isdir(folder) and not os.path.islink(folder):
            add(FeaturePaths(kept, folder))
    try:
        fleet = read_json_object(paths.file(FLEET_FILE)) or {}
    except RalphError as exc:
        return found, f"{exc} (the records of loops still in their worktrees are left out)"
    listed = fleet.get("loops")
    for loop in listed if isinstance(listed, list) else []:
        if not isinstance(loop, dict) or loop.get("state") == "merged":
            continue  # a merged loop's records were moved to loops/ with its worktree's removal
        tree, where = loop.get("worktree"), loop.get("featureDir")
        if isinstance(tree, str) and isinstance(where, str) and os.path.isabs(where) and os.path.isdir(where):
            add(FeaturePaths(tree, where))  # its state folder: .ralph/ for a feature at the project's root
    return found, None


def recorded_budget(lines: list[dict[str, Any]]) -> tuple[bool, float | None]:
    """The cost budget the latest run had (its metrics lines say it: `--max-cost` included, which no config
    file holds), and whether it is recorded at all (lines of an older ralph are not: the config then says)."""
    # the last line of a run: a resolver's call (a parallel run's own) had no budget of its own
    last = next((line for line in reversed(lines) if line.get("outcome") != RESOLVE_OUTCOME), None)
    if last is None or "max_cost_usd" not in last:
        return False, None
    value = last["max_cost_usd"]
    return True, float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_events(path: str) -> tuple[list[dict[str, Any]], str | None]:
    """The event log's lines, the rotated generation first; lines that are not JSON objects are skipped (the
    agent can write there). The problem with a file that is not a regular file, or None."""
    found: list[dict[str, Any]] = []
    for name in (path + ".1", path):
        try:
            rows = read_tail_lines(name, EVENTS_TAIL, display_path(name, os.getcwd())) or []
        except RalphError as exc:
            return found, str(exc)
        for row in rows:
            try:
                item = json.loads(row)
            except (ValueError, RecursionError):
                continue
            if isinstance(item, dict):
                found.append(item)
    return found, None


def budget(project_root: str) -> tuple[float | None, str | None]:
    """A run's cost budget (budget.max_cost_usd, from the config files and RALPH_MAX_COST_USD), and the problem
    when the config cannot be read (the page then shows the spend without it)."""
    from ralphloop.config.settings import load_settings  # YAML and the settings' values: only the page needs them

    try:
        settings = load_settings(project_root, {})
    except RalphError as exc:
        return None, f"{exc} (the page shows no budget)"
    return settings.budget.max_cost_usd, None
