"""A stand-in `copilot` executable that replays whole real Copilot CLI 1.0.102 runs (tests/fixtures/copilot/),
one per invocation, in a planned order (tests/agents/_replay.py); "work" plays mock_ok_json. The usage file a run
wrote is copied to the `--usage-output-file` path it was given, as the real CLI writes it at its exit."""

from __future__ import annotations

import os
import shutil

from _replay import FIXTURES, play, this_run

name, args = this_run("mock_ok_json")
folder = os.path.join(FIXTURES, "copilot", name)
usage = os.path.join(folder, "usage.json")
if "--usage-output-file" in args and os.path.exists(usage):
    shutil.copyfile(usage, args[args.index("--usage-output-file") + 1])
play(folder)
