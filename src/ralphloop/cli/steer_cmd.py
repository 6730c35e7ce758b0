"""`ralph pause | resume | stop [--now] | say TEXT | answer TEXT [-f FEATURE] [--story ID]`: steer a running loop
from any terminal (issue 36). The request is written to the loop's control.json (state/steer.py, records/control.py),
which the loop reads between iterations: nothing is sent to the running process but `stop --now`'s interruption (a
Ctrl+C's, so the attempt is saved and undone as after one). `--story ID` names one loop of a parallel run.

A command for a loop that is not running says so and writes nothing; so does one from an agent's own process (ralph
marks every agent's environment: an agent cannot steer the loop it runs in).
"""

from __future__ import annotations

import argparse
import os

from ralphloop.core.errors import RalphError
from ralphloop.core.steering import AGENT_MARK
from ralphloop.files.read import lock_holder_alive
from ralphloop.project.owner import check_state_folder
from ralphloop.project.paths import display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.state.fleet import read_fleet
from ralphloop.state.steer import loop_of, steer, steer_feature, text_of


def command(args: argparse.Namespace, argv: list[str]) -> int:
    action = args.command
    if os.environ.get(AGENT_MARK):
        raise RalphError(
            f"ralph {action}: refused: this runs in an agent's process (${AGENT_MARK} is set); an agent cannot steer "
            "the loop it runs in"
        )
    words = getattr(args, "text", None)
    text = text_of(action, " ".join(words) if words is not None else None)
    feature = resolve_feature(find_project_root(), args.feature)
    from ralphloop.cli.temporal_steer import on_temporal, steer_remote

    fleet = read_fleet(feature)
    local = (fleet is not None and fleet["alive"]) or lock_holder_alive(feature.lock) is not None  # here comes first
    if not local and on_temporal(feature):  # a parallel run on Temporal: its workflow is told
        said = steer_remote(feature, action, text, now=bool(getattr(args, "now", False)), story=args.story)
        print(f"ralph: {feature.selector}{f' story {args.story}' if args.story else ''}: {said}")
        return 0
    paths = loop_of(feature, args.story)
    check_state_folder(paths.state_dir, display_path(paths.state_dir, os.getcwd()))
    now = bool(getattr(args, "now", False))
    # a story's loop, or the feature: its loop, or the whole of its parallel run
    said = steer(paths, action, text, now=now) if args.story else steer_feature(paths, action, text, now=now)
    print(f"ralph: {feature.selector}{f' story {args.story}' if args.story else ''}: {said}")
    return 0
