"""Records what it was given, then (optionally) hands the same prompt to another agent.

argv[1]: the file to append one JSON line to: the prompt read from stdin, every RALPH_*
environment variable and the working directory. argv[2:] (if any): a command run with the
same prompt on stdin; this agent exits with its exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

prompt = sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as handle:
    record = {
        "prompt": prompt,
        "env": {key: value for key, value in os.environ.items() if key.startswith("RALPH_")},
        "cwd": os.getcwd(),
    }
    handle.write(json.dumps(record) + "\n")
if len(sys.argv) > 2:
    sys.exit(subprocess.run(sys.argv[2:], input=prompt, text=True, check=False).returncode)
