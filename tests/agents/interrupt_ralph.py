"""Stops the run as a user's Ctrl+C would: sends SIGINT to ralph (its parent), then waits to be stopped."""

from __future__ import annotations

import os
import signal
import sys
import time

sys.stdin.read()
print("interrupting ralph", flush=True)
os.kill(os.getppid(), signal.SIGINT)
time.sleep(300)  # ralph stops this process group; the test never waits for this
