"""A hook (or a git hook) that will not stop when asked: it notes every SIGTERM it gets in TERM_FILE and goes on,
until a SIGKILL ends it. It writes its PID to PID_FILE first, so a test knows when it runs and can check it died.

Usage: stubborn.py PID_FILE TERM_FILE
"""

from __future__ import annotations

import os
import signal
import sys

pid_file, term_file = sys.argv[1], sys.argv[2]


def note(signum: int, frame: object) -> None:
    with open(term_file, "a", encoding="utf-8") as handle:
        handle.write("TERM\n")


signal.signal(signal.SIGTERM, note)
with open(pid_file + ".tmp", "w", encoding="utf-8") as handle:
    handle.write(str(os.getpid()))
os.replace(pid_file + ".tmp", pid_file)  # whole: the test reads it while this runs
while True:
    signal.pause()
