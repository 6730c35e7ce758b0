"""`ralph report [-f F] [--json]`: the summary of a feature's ralph_metrics.jsonl, seed 004's FINAL SUMMARY.

Read-only, and light like `ralph status` (json, os, dataclasses): no rich, YAML, msgspec or engine.
"""

from __future__ import annotations

import json
import os
import sys

from ralphloop.paths import display_path, find_project_root, resolve_feature
from ralphloop.records.metrics import METRICS_NAME, SCHEMA_VERSION, read_metrics
from ralphloop.records.metrics_text import format_summary
from ralphloop.records.summary import summarize
from ralphloop.textsafe import json_for_terminal, strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature)
    metrics_file = paths.file(METRICS_NAME)
    shown = display_path(metrics_file, os.getcwd())
    read = read_metrics(shown)  # errors name the file as the user sees it
    for number, reason in read.skipped:
        print(f"ralph: warning: {shown}:{number}: skipped {reason}", file=sys.stderr)
    # The file spans every run of the feature: no single run's max_iterations applies to it.
    summary = summarize(read.lines)
    if args.json:
        body = {
            "schema_version": SCHEMA_VERSION,
            "feature": paths.name,
            "metrics_file": metrics_file,
            "summary": summary.to_json(),
            "skipped": [{"line": number, "reason": reason} for number, reason in read.skipped],
        }
        print(json_for_terminal(json.dumps(body, indent=2, ensure_ascii=False)))
    else:  # the lines quote the agent's own words (a model name, an outcome): no escape reaches the screen
        print(strip_terminal_controls(format_summary(summary, metrics_path=shown)))
    return 0
