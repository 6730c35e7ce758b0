"""`ralph signal KIND ...`: an agent tells the loop what happened, with no prose parsing.

Run inside an iteration, it finds the feature through $RALPH_FEATURE_DIR and the iteration
through $RALPH_ITERATION (both set for every agent); `-f` names a feature by hand. With no loop
running for the feature, nothing would ever read the record: it is refused, and nothing written.
"""

from __future__ import annotations

import argparse
import os

from ralphloop.analysis.signals import SignalRecord
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import iso
from ralphloop.files.read import lock_holder_alive
from ralphloop.files.safe_read import check_file
from ralphloop.plugins.formats import detect
from ralphloop.project.owner import check_state_folder
from ralphloop.project.paths import FeaturePaths, display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.records.signal_log import append_signal, clean

USAGE = {
    "complete": "ralph signal complete [NOTE]",
    "blocked": "ralph signal blocked REASON",
    "fail": "ralph signal fail ID [REASON]",
    "done": "ralph signal done ID",
    "learn": "ralph signal learn TEXT",
}


def command(args: argparse.Namespace, argv: list[str]) -> int:
    record = build_record(args.kind, [clean(word) for word in args.words], _iteration())
    paths = _feature(args.feature)
    shown = display_path(paths.signals, os.getcwd())
    check_state_folder(paths.state_dir, display_path(paths.state_dir, os.getcwd()))
    check_file(paths.signals, shown, follow=False)  # a FIFO or a link in its place: said, not waited on
    _refuse_outside_a_loop(paths, shown)
    try:
        append_signal(paths.signals, record, iso(SystemClock().now()))
    except OSError as exc:
        raise RalphError(f"{shown}: cannot append: {exc.strerror or exc}") from None
    where = f"iteration {record.iteration}" if record.iteration is not None else "the next iteration to end"
    subject = " ".join(part for part in (record.kind, record.id, record.text) if part)
    print(f"ralph: recorded '{subject}' for {where} in {display_path(paths.signals, os.getcwd())}")
    return 0


def _refuse_outside_a_loop(paths: FeaturePaths, shown: str) -> None:
    """A loop reads only the records appended while its agent runs: with no run holding the feature's lock
    (the flock a live `ralph run` holds: a kill frees it), a record would never count, so none is written."""
    if lock_holder_alive(paths.lock) is None:
        raise RalphError(
            f"{shown}: not recorded: no loop is running for {paths.selector}; ralph signal works only inside an "
            "iteration of `ralph run`, where the agent gets $RALPH_FEATURE_DIR and $RALPH_ITERATION"
        )


def build_record(kind: str, words: list[str], iteration: int | None) -> SignalRecord:
    """The record for `ralph signal KIND WORDS...`, or a usage error naming the form."""
    words = [word for word in words if word]
    needs_id = kind in ("fail", "done")
    if needs_id and not words:
        raise RalphError(f"signal {kind}: an id is required (usage: {USAGE[kind]})")
    if kind in ("blocked", "learn") and not words:
        raise RalphError(f"signal {kind}: text is required (usage: {USAGE[kind]})")
    if kind == "done" and len(words) > 1:
        raise RalphError(f"signal done: one id only (usage: {USAGE[kind]})")
    if needs_id:
        return SignalRecord(kind, iteration, id=words[0], text=clean(" ".join(words[1:])))
    return SignalRecord(kind, iteration, text=clean(" ".join(words)))


def _iteration() -> int | None:
    raw = os.environ.get("RALPH_ITERATION", "").strip()
    return int(raw) if raw.isdigit() else None


def _feature(selector: str | None) -> FeaturePaths:
    if selector:
        return resolve_feature(find_project_root(), selector)
    folder = os.environ.get("RALPH_FEATURE_DIR", "").strip()
    if folder:
        if not os.path.isdir(folder):
            raise RalphError(f"$RALPH_FEATURE_DIR: {folder}: no such folder")
        root = os.environ.get("RALPH_PROJECT_ROOT", "").strip() or find_project_root(folder)
        if detect(folder) is None:
            raise RalphError(f"$RALPH_FEATURE_DIR: {folder}: not a feature folder (no task file in it)")
        return FeaturePaths(root, folder)
    return resolve_feature(find_project_root(), None)
