"""The network of a run's boxes with `sandbox.network: allow` (issue 35): a network namespace of its own, whose
only way out is ralph's filtering proxy (processes/proxy.py) listening inside it on 127.0.0.1:3128.

Made once per runner, at its first command: bubblewrap starts processes/box_listener.py in a new network namespace;
it listens there and hands ralph the listening socket and the namespace (file descriptors, over a socket pair), and
ends. ralph keeps both open, which keeps the namespace alive; the proxy accepts on that socket from outside it; each
agent's box enters the namespace through `nsenter` (util-linux), so nothing of ralph's starts with each call (a
forwarder in every box cost an interpreter's start per iteration).

Entering a network namespace takes the right to administer its owner, the user namespace bubblewrap made for it when
ralph is not root: nsenter enters that one first, where ralph's user is root, so the agent's bubblewrap is told to
make a user namespace of its own with the user's ids (an agent must not think it is root: some CLIs refuse to run so).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess

from ralphloop.core.errors import RalphError
from ralphloop.processes.proxy import FilterProxy

PORT = 3128  # inside the namespace: every run's its own
_NS_GET_USERNS = 0xB701  # ioctl(2) on a namespace: its owning user namespace (linux/nsfs.h)
_START_S = 10.0
LISTENER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "box_listener.py")


class BoxNetwork:
    """The namespace and the proxy in it, until `close` (or the end of ralph's process)."""

    def __init__(
        self, bwrap: str, python: str, nsenter: str, allowed: tuple[str, ...], quiet: tuple[str, ...] = ()
    ) -> None:
        ours, theirs = socket.socketpair()
        argv = [bwrap, "--die-with-parent", "--unshare-net", "--ro-bind", "/", "/"]  # all of it: ralph runs there
        argv += ["--proc", "/proc", "--", python, "-S", "-I", LISTENER, str(theirs.fileno()), str(PORT)]
        try:
            with ours, theirs:
                done = subprocess.run(
                    argv, pass_fds=(theirs.fileno(),), capture_output=True, timeout=_START_S, check=False
                )
                theirs.close()
                ours.settimeout(_START_S)
                _, handed, _, _ = socket.recv_fds(ours, 1, 2, socket.MSG_CMSG_CLOEXEC)  # no child inherits them
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RalphError(f"the sandbox's network could not be made: {exc}") from None
        if len(handed) != 2:
            for fd in handed:
                os.close(fd)
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RalphError(f"the sandbox's network could not be made: {said[-1] if said else done.returncode}")
        listener, self._network = socket.socket(fileno=handed[0]), handed[1]
        try:
            self._owner: int | None = fcntl.ioctl(self._network, _NS_GET_USERNS)
            if os.fstat(self._owner).st_ino == os.stat("/proc/self/ns/user").st_ino:  # ralph is root: ours
                os.close(self._owner)
                self._owner = None
        except OSError as exc:
            listener.close()
            os.close(self._network)
            raise RalphError(f"the sandbox's network could not be entered: {exc.strerror or exc}") from None
        self.nsenter = nsenter
        self.port = PORT
        self.proxy = FilterProxy(allowed, listener, quiet)

    @property
    def own_user(self) -> bool:
        """Whether entering it enters a user namespace too (ralph is not root), where the box must make its own."""
        return self._owner is not None

    def enter(self) -> tuple[list[str], tuple[int, ...]]:
        """The command line that runs the next one in the namespace, and the descriptors it must inherit."""
        argv = [self.nsenter]
        if self._owner is not None:
            argv += [f"--user=/proc/self/fd/{self._owner}", "--preserve-credentials"]
        argv += [f"--net=/proc/self/fd/{self._network}", "--"]
        return argv, (self._network,) if self._owner is None else (self._owner, self._network)

    def close(self) -> None:
        self.proxy.close()
        for fd in (self._network, self._owner):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
