"""A stand-in `opencode` executable that replays whole real opencode 1.18.33 runs (tests/fixtures/opencode/), one
per invocation, in a planned order (tests/agents/_replay.py); "work" plays mock_tool_all_json (two shell commands,
one failing, and no permission denial). Each call also records the prompt, `PWD`, the folder it ran in and
`OPENCODE_PERMISSION`."""

from __future__ import annotations

import os
from typing import Any

from _replay import FIXTURES, play, this_run


def more(prompt: bytes) -> dict[str, Any]:
    return {
        "stdin": prompt.decode("utf-8", "replace"),
        "pwd": os.environ.get("PWD"),
        "cwd": os.getcwd(),
        "permission": os.environ.get("OPENCODE_PERMISSION"),
    }


name, _ = this_run("mock_tool_all_json", more)
play(os.path.join(FIXTURES, "opencode", name))
