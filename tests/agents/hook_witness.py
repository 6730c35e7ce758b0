"""An agent for the sandbox's hook test (issue 35): given a prompt that starts with "WITNESS", it is a prompt hook's
agent and says, a JSON line each ({"what": ..., "ok": bool}), what it could do: write the user's ~/.ssh (USER_HOME,
its argument), see ralph's secret variable, see ralph's processes; any other prompt goes to goal_agent.py, the loop's
own agent, unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

prompt = sys.stdin.read()
if not prompt.startswith("WITNESS"):
    goal = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goal_agent.py")
    sys.exit(subprocess.run([sys.executable, goal], input=prompt, text=True, check=False).returncode)


def tell(what: str, ok: bool) -> None:
    print(json.dumps({"what": what, "ok": ok}), flush=True)


try:
    with open(os.path.join(sys.argv[1], ".ssh", "authorized_keys"), "w") as handle:
        handle.write("ssh-ed25519 planted\n")
    tell("write ~/.ssh/authorized_keys", True)
except OSError:
    tell("write ~/.ssh/authorized_keys", False)
tell("secret variable", "AWS_SECRET_ACCESS_KEY" in os.environ)


ralph = os.environ["RALPH_PROCESS_TAG"].split(".")[0]  # ralph's pid, as its process tag names it
tell("see ralph", os.path.exists(f"/proc/{ralph}"))
tell("home is its own", os.environ.get("HOME") != sys.argv[1])
