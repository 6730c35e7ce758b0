"""A stand-in `aider` executable that replays whole real aider 0.86.2 runs (tests/fixtures/aider/), one per
invocation, in a planned order (tests/agents/_replay.py); "work" plays mock_ok. Each call also records
`prompt_bytes`, the size of the file after --message-file as aider reads it, and `BROWSER`."""

from __future__ import annotations

import os
import sys
from typing import Any

from _replay import FIXTURES, play, this_run


def more(stdin: bytes) -> dict[str, Any]:
    args = sys.argv[2:]
    prompt_file = args[args.index("--message-file") + 1] if "--message-file" in args else None
    size = os.path.getsize(prompt_file) if prompt_file is not None else 0
    return {"prompt_bytes": size, "browser": os.environ.get("BROWSER")}


name, _ = this_run("mock_ok", more)
play(os.path.join(FIXTURES, "aider", name))
