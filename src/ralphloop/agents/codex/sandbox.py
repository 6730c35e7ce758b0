"""Codex's Linux sandbox failing to start a command: bubblewrap (bwrap) cannot create the namespaces it needs, as in
many containers and VMs. Codex still finishes the turn and exits 0; each command just fails with bwrap's own error
as its whole output, so the agent can do nothing, and no error event says why.

Checked against 0.169.0 (tests/fixtures/codex/sandbox_*). When bwrap's line holds no words Codex takes for a sandbox
denial ("bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged
user namespaces. …", "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces
exceeded (ENOSPC)"), the `--json` stream has the command's item: `"status": "failed"`, `exit_code` 1, bwrap's line
as its `aggregated_output`. When it does ("Operation not permitted", "Permission denied": "bwrap: Failed to make /
slave: Operation not permitted", "bwrap: loopback: Failed to create NETLINK_ROUTE socket: …", "bwrap: setting up uid
map: Permission denied"), the stream has no item at all for the command and stderr is empty: only the session file
keeps it, as the tool's output the model read ("Process exited with code 1 … Output:\nbwrap: …"), which
session_file.py reads after the process.
"""

from __future__ import annotations

import re
from typing import Final

from ralphloop.core.protocols import ErrorKind
from ralphloop.words.textsafe import one_line

# bwrap's own line, first in the output: the command itself never started. Only namespace and permission failures:
# a command of the agent's that runs bwrap and fails on its arguments is the agent's business.
_BWRAP_FAILED: Final = re.compile(
    r"\Abwrap: [^\n]*(?:namespace|uid map|gid map|RTM_NEW|Permission denied|Operation not permitted|EPERM|ENOSPC)"
)

# How Codex's shell tool (exec_command, write_stdin) words its result for the model, in the session file.
_EXITED: Final = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)
_RUNNING: Final = re.compile(r"^Process running with session ID", re.MULTILINE)
_OUTPUT: Final = "\nOutput:\n"

FIX: Final = (
    "Fix: let this machine create user namespaces for bubblewrap (Codex's sandbox prerequisites: "
    "https://developers.openai.com/codex/concepts/sandboxing#prerequisites), or run with `--permissions all` "
    "(Codex without its sandbox) only inside a container or VM you can throw away"
)


def bwrap_failure(output: str) -> str | None:
    """bwrap's error line when a command's whole output is bwrap failing to set up the sandbox; None otherwise."""
    text = output.lstrip()
    if not _BWRAP_FAILED.match(text):
        return None
    return text.splitlines()[0].strip()


def tool_output(text: str) -> tuple[int | None, str] | None:
    """A shell tool's result as the model read it: its exit code (None: still running) and what it printed; None
    when `text` is another tool's result."""
    exited = _EXITED.search(text)
    if exited is None and _RUNNING.search(text) is None:
        return None
    _, _, printed = text.partition(_OUTPUT)
    return (int(exited[1]) if exited else None), printed


def refused(why: str) -> tuple[ErrorKind, str]:
    """The kind and message of a run whose every command the sandbox could not start: nothing the agent tries will
    run on this machine, so it stops the loop (like a flag the CLI refuses) rather than spend another call."""
    return ErrorKind.REFUSED, f"codex's sandbox could not run its commands: {one_line(why, 300).rstrip('.')}. {FIX}"
