"""Starts a grandchild that would live for minutes, records its PID, then hangs: for the timeout test.

argv[1]: the file to write the grandchild's PID to. With --setsid the grandchild leaves the
process group (it must still be found through the process tree).
"""

from __future__ import annotations

import subprocess
import sys
import time

sys.stdin.read()
grandchild = subprocess.Popen(["sleep", "300"], start_new_session="--setsid" in sys.argv)
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    handle.write(str(grandchild.pid))
print("working...", flush=True)
time.sleep(300)
