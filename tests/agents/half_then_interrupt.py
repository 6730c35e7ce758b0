"""Finishes its story, except the first time: then it does half the work (work-ID.txt and a ledger line, no
mark) and interrupts ralph (its parent) with the signal named in argv[2] (INT by default), as a user's Ctrl+C
or a `kill` would, and waits to be stopped. argv[1]: a marker file that says the first time has been."""

from __future__ import annotations

import os
import signal
import sys
import time

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

sys.stdin.read()
task = os.environ["RALPH_TASK_ID"]
with open("ledger.txt", "a", encoding="utf-8") as handle:
    handle.write(f"{task}\n")
if os.path.exists(sys.argv[1]):
    finish_story(task, os.environ["RALPH_FEATURE_DIR"])
    print(f"finished {task}")
    sys.exit(0)
open(sys.argv[1], "w").close()
with open(f"work-{task}.txt", "w", encoding="utf-8") as handle:
    handle.write("half\n")
os.kill(os.getppid(), getattr(signal, f"SIG{sys.argv[2] if len(sys.argv) > 2 else 'INT'}"))
time.sleep(300)
