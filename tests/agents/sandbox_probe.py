"""A hostile agent for the sandbox's tests (issue 35): it tries what an agent let loose overnight could, prints one
JSON line per attempt ({"what": ..., "ok": bool, "said": ...}), then does its story honestly (a file in the worktree,
every story of .ralph/feat/prd.json passing) and exits 0.

Arguments: USER_HOME (the user's real home, as ralph sees it), OTHER_REPO (another repository's folder),
ALLOWED_PORT and BLOCKED_PORT (two HTTP servers on the machine's loopback), MARKER (a file a planted git hook would
write).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

DAEMON_SECONDS = "301.25"  # how the test finds it on the machine afterwards


def attempt(what: str, action: object) -> None:
    try:
        said = action()  # type: ignore[operator]
        print(json.dumps({"what": what, "ok": True, "said": str(said)[:200]}), flush=True)
    except Exception as exc:  # every failure is the finding
        print(json.dumps({"what": what, "ok": False, "said": f"{type(exc).__name__}: {exc}"[:200]}), flush=True)


def write(path: str, text: str = "x\n") -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    return path


def read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def fetch(port: str) -> int:
    return int(urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).status)


def ralph_pid() -> int:
    """ralph's process id, as ralph's process tag names it (`<ralph's pid>.<n>`, processes/reaper.py)."""
    return int(os.environ["RALPH_PROCESS_TAG"].split(".")[0])


def see_ralph() -> str:
    """ralph's command line, read through /proc: in a pid namespace of its own, ralph is not there."""
    with open(f"/proc/{ralph_pid()}/cmdline", "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def plant_hook(marker: str) -> str:
    git_dir = subprocess.run(["git", "rev-parse", "--git-dir"], capture_output=True, text=True, check=True).stdout
    path = os.path.join(git_dir.strip(), "hooks", "post-commit")
    write(path, f"#!/bin/sh\necho hook >> {marker}\n")
    os.chmod(path, 0o755)
    return path


def set_hooks_path(marker: str) -> str:
    subprocess.run(["git", "config", "core.hooksPath", "/tmp"], check=True, capture_output=True)
    return "set"


def daemon() -> str:
    """A process that outlives the agent if nothing stops it: detached, in its own session."""
    child = subprocess.Popen(
        ["sleep", DAEMON_SECONDS], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return str(child.pid)


def main() -> int:
    user_home, other_repo, allowed, blocked, marker = sys.argv[1:6]
    attempt("write ~/.ssh/authorized_keys", lambda: write(os.path.join(user_home, ".ssh", "authorized_keys")))
    attempt("read ~/.ssh/id_ed25519", lambda: read(os.path.join(user_home, ".ssh", "id_ed25519")))
    attempt("read ~/.aws/credentials", lambda: read(os.path.join(user_home, ".aws", "credentials")))
    attempt("write /etc", lambda: write("/etc/ralph-sandbox-probe"))
    attempt("write another repository", lambda: write(os.path.join(other_repo, "planted.txt")))
    attempt("secret variable", lambda: os.environ["AWS_SECRET_ACCESS_KEY"])
    attempt("allowed host", lambda: fetch(allowed))
    attempt("blocked host", lambda: fetch(blocked))
    attempt("see ralph", see_ralph)
    attempt("signal ralph", lambda: os.kill(ralph_pid(), 0))
    attempt("plant a git hook", lambda: plant_hook(marker))
    attempt("set core.hooksPath", lambda: set_hooks_path(marker))
    attempt("start a daemon", daemon)
    write("work.txt", "honest work\n")
    prd = os.path.join(".ralph", "feat", "prd.json")
    body = json.loads(read(prd))
    for story in body["userStories"]:
        story["passes"] = True
    write(prd, json.dumps(body, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
