"""An agent for the crash and survivor tests: does its work, then what a test says — kills ralph (its parent)
with SIGKILL, leaves processes running, hangs. Steps run in this order:

  --write PATH=TEXT   write a file (relative to the project); repeatable
  --pass ID           set passes: true for a story in $RALPH_FEATURE_DIR/prd.json; repeatable
  --daemon PIDFILE    double-fork a daemon (setsid; it closes its pipes) that sleeps 300 s; its PID to PIDFILE
  --child PIDFILE     start a plain child that sleeps 300 s (it keeps the agent's pipes); its PID to PIDFILE
  --pidfile FILE      write this agent's own PID to FILE
  --kill-ralph        SIGKILL ralph, as a crash or an OOM kill would
  --hang              sleep 300 s (until ralph or a test stops it)
  --once-marker FILE  do --kill-ralph and --hang only when FILE does not exist yet (and create it): the next run's
                      agent, started from the same command, just works
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--write", action="append", default=[])
parser.add_argument("--pass", dest="passes", action="append", default=[])
parser.add_argument("--daemon")
parser.add_argument("--child")
parser.add_argument("--pidfile")
parser.add_argument("--kill-ralph", action="store_true")
parser.add_argument("--hang", action="store_true")
parser.add_argument("--once-marker")
args = parser.parse_args()
sys.stdin.read()

first = True
if args.once_marker:
    first = not os.path.exists(args.once_marker)
    with open(args.once_marker, "a", encoding="utf-8"):
        pass


def write_pid(path: str, pid: int) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(str(pid))
    os.replace(path + ".tmp", path)  # whole, or not there: the test polls it


if args.pidfile:
    write_pid(args.pidfile, os.getpid())
for item in args.write:
    path, _, text = item.partition("=")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
if args.passes:
    prd_path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(prd_path, encoding="utf-8") as handle:
        prd = json.load(handle)
    for story in prd["userStories"]:
        if story["id"] in args.passes:
            story["passes"] = True
    with open(prd_path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
if args.daemon:
    # The classic daemon: fork, setsid, fork again, close every inherited descriptor.
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 1024)
            write_pid(args.daemon, os.getpid())
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.wait()
if args.child:
    child = subprocess.Popen(["sleep", "300"])
    write_pid(args.child, child.pid)
print("did the work", flush=True)
if args.kill_ralph and first:
    os.kill(os.getppid(), signal.SIGKILL)
if args.hang and first:
    time.sleep(300)
