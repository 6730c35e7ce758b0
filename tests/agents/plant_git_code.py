"""A hostile agent: it plants code for git to run in the repository's .git (a reference-transaction and a
post-checkout hook, a pre-commit hook, an fsmonitor program in .git/config), each writing a line to the file named by
its first argument when run, then fails its iteration (exit 1). ralph's own git must run none of it."""

from __future__ import annotations

import os
import subprocess
import sys

marker = sys.argv[1]
git_dir = subprocess.run(["git", "rev-parse", "--git-dir"], capture_output=True, text=True, check=True).stdout.strip()
hooks = os.path.join(git_dir, "hooks")
os.makedirs(hooks, exist_ok=True)
for name in ("reference-transaction", "post-checkout", "pre-commit", "post-commit"):
    path = os.path.join(hooks, name)
    with open(path, "w") as handle:
        handle.write(f"#!/bin/sh\necho {name} >> {marker}\n")
    os.chmod(path, 0o755)
program = os.path.join(git_dir, "fsmonitor.sh")
with open(program, "w") as handle:
    handle.write(f"#!/bin/sh\necho fsmonitor >> {marker}\n")
os.chmod(program, 0o755)
subprocess.run(["git", "config", "core.fsmonitor", program], check=True)
with open("work.txt", "a") as handle:
    handle.write("work\n")
sys.exit(1)
