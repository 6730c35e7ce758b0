"""`ralph status [-f F] [--json]`: where a feature's loop stands, read from its files alone.

Kept light on purpose: it is what scripts and prompts poll. `--json` imports neither json nor re, datetime or
shlex (files/json_text.py says why); the words for a person are in status_text.py.
"""

from __future__ import annotations

from ralphloop.cli.temporal_where import maybe_on_temporal
from ralphloop.files.json_text import dumps
from ralphloop.project.paths import find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.state.fleet import read_fleet_noted
from ralphloop.state.report import gather
from ralphloop.words.textsafe import json_for_terminal

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature, command=("status",), archived=True)
    report = gather(paths)
    fleet, fleet_note = read_fleet_noted(paths)
    if fleet_note is None and maybe_on_temporal(paths, fleet):  # its workflow tells it (issue 37)
        from ralphloop.cli.temporal_status import remote_fleet

        fleet, fleet_note = remote_fleet(paths)
    if args.json:
        report.update(fleet=fleet, fleetNote=fleet_note)
        print(json_for_terminal(dumps(report)))
        return 0
    from ralphloop.cli.status_text import status_text

    print(status_text(report, fleet, fleet_note, paths))
    return 0
