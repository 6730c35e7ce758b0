"""`ralph report [-f F] [--json | --html FILE]`: what a feature's runs did and cost, from its record files.

The text: seed 004's FINAL SUMMARY, the receipt (a row per task: its attempts, agent time, tokens, cost; the
total row the summary's) and the timeline (iterations and the waits between them, in local time). `--json`:
the same data, times in UTC. `--html FILE`: one self-contained page with charts (plotly, the optional extra
`ralphloop[report]`); FILE `-` is stdout.

Read-only, and light like `ralph status` without --html (json, os, dataclasses): no rich, YAML, msgspec, plotly
or engine.
"""

from __future__ import annotations

import json
import os
import sys

from ralphloop.core.errors import RalphError
from ralphloop.project.paths import find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.records.metrics import SCHEMA_VERSION
from ralphloop.records.metrics_text import format_summary
from ralphloop.report.receipt import to_json
from ralphloop.report.sources import Gathered, gather
from ralphloop.report.text import receipt_text
from ralphloop.words.textsafe import json_for_terminal, strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

EXTRA = "pip install 'ralphloop[report]'"


def command(args: argparse.Namespace, argv: list[str]) -> int:
    html_file: str | None = getattr(args, "html", None)
    if html_file is not None and args.json:
        raise RalphError("--json and --html are two outputs: give one of them")
    if html_file is not None:
        check_target(html_file)
    root = find_project_root()
    paths = resolve_feature(root, args.feature, command=("report",), archived=True)
    got = gather(paths)
    for warning in got.warnings:
        print(f"ralph: warning: {strip_terminal_controls(warning)}", file=sys.stderr)
    if html_file is not None:
        return _html(got, root, html_file)
    # The file spans every run of the feature: no single run's max_iterations applies to it.
    summary = got.receipt.summary
    if args.json:
        body = {
            "schema_version": SCHEMA_VERSION,
            "feature": got.feature,
            "metrics_file": got.metrics_file,
            "summary": summary.to_json(),
            **to_json(got.receipt),
            "skipped": [{"line": number, "reason": reason} for number, reason in got.skipped],
        }
        print(json_for_terminal(json.dumps(body, indent=2, ensure_ascii=False)))
    else:  # the lines quote the agent's own words (a model name, an outcome): no escape reaches the screen
        text = "\n\n".join(
            [
                format_summary(summary),
                receipt_text(
                    got.receipt,
                    got.done_word,
                    got.units,
                    " ".join(filter(None, ["ralph report", paths.flag, "--json"])),
                ),
                f"ℹ  Read from: {got.shown}",
                *([f"ℹ  {paths.name} is archived: {paths.display()}"] if paths.is_archived else []),
            ]
        )
        print(strip_terminal_controls(text))
    return 0


def check_target(name: str) -> None:
    """Refuse, before anything is read or built, a FILE that cannot be written: in no folder, a folder, or a
    folder that is a file. `-` is stdout. (A folder ralph may not write in is found when it writes.)"""
    if name == "-":
        return
    if not name:
        raise RalphError("--html: give a file name (or - for stdout)")
    folder = os.path.dirname(name) or "."
    if os.path.isdir(name):
        raise RalphError(f"--html {name}: is a folder (name a file in it, e.g. {os.path.join(name, 'report.html')})")
    if not os.path.exists(folder):
        raise RalphError(f"--html {name}: no such folder {folder}")
    if not os.path.isdir(folder):
        raise RalphError(f"--html {name}: {folder} is not a folder")


def _html(got: Gathered, root: str, name: str) -> int:
    try:
        from ralphloop.report.html_page import page
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("plotly", "narwhals", "packaging"):
            raise RalphError(f"--html needs plotly, an optional extra: {EXTRA}") from None
        raise
    from datetime import datetime

    from ralphloop import __version__
    from ralphloop.report.sources import budget

    recorded, limit = got.run_budget
    problem = None
    if not recorded:  # records of an older ralph: the budget the config sets now
        limit, problem = budget(root)
    if problem:
        print(f"ralph: warning: {strip_terminal_controls(problem)}", file=sys.stderr)
    notes = [f"{len(got.skipped):,} cut line(s) of the metrics file skipped."] if got.skipped else []
    data = page(got, budget=limit, generated=datetime.now().astimezone(), version=__version__, notes=notes).encode()
    if name == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    _write(name, data)
    print(f"ℹ  Wrote {name} ({len(data) / 1_000_000:.1f} MB, works offline) from {got.shown}")
    return 0


def _write(name: str, data: bytes) -> None:
    """Replace `name` at once (a temporary file in its folder, renamed): a reader never sees half a page, and a
    failed write leaves nothing behind."""
    from ralphloop.files.store import atomic_write_bytes

    try:
        atomic_write_bytes(name, data)
    except OSError as exc:
        raise RalphError(f"--html {name}: cannot write: {exc.strerror or exc}") from None
