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

from ralphloop.cli.temporal_where import remote_steer
from ralphloop.core.errors import RalphError
from ralphloop.core.steering import AGENT_MARK
from ralphloop.project.owner import check_state_folder
from ralphloop.project.paths import display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
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
    now = bool(getattr(args, "now", False))
    said = remote_steer(feature, action, text, now, args.story, "cli")  # a parallel run on Temporal: its workflow
    if said is not None:
        print(f"ralph: {feature.selector}{f' story {args.story}' if args.story else ''}: {said}")
        return 0
    paths = loop_of(feature, args.story)
    check_state_folder(paths.state_dir, display_path(paths.state_dir, os.getcwd()))
    # a story's loop, or the feature: its loop, or the whole of its parallel run
    said = steer(paths, action, text, now=now) if args.story else steer_feature(paths, action, text, now=now)
    print(f"ralph: {feature.selector}{f' story {args.story}' if args.story else ''}: {said}")
    return 0
