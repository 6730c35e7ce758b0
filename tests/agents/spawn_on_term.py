"""Leaves a child that, when ralph stops it with SIGTERM, daemonises a grandchild (setsid) before it dies:
a process caught while it daemonises. argv[1]: where the grandchild writes its PID."""

from __future__ import annotations

import os
import signal
import sys
import time

sys.stdin.read()
ready_read, ready_write = os.pipe()
if os.fork() == 0:

    def on_term(*_: object) -> None:
        if os.fork() == 0:
            os.setsid()
            with open(sys.argv[1] + ".tmp", "w", encoding="utf-8") as handle:
                handle.write(str(os.getpid()))
            os.replace(sys.argv[1] + ".tmp", sys.argv[1])
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # the agent's pipes closed: ralph sees the agent end, and looks for what it left
    os.write(ready_write, b"x")
    while True:
        time.sleep(1)
os.read(ready_read, 1)  # the child's handler is in place
print("done")
