"""The sandbox around the agent (issue 35): bubblewrap (Debian's `bwrap`) wrapped around the command the runner
starts, so the agent works in the least it needs.

- Filesystem: the system read-only; the user's home (and every folder `hidden` names) replaced by an empty one; in
  it only what the agent must run (its CLI's install, the interpreter, the folders on PATH) shown again, read-only;
  writable only the loop's worktree and the repository's git folder (with its hooks and config read-only: ralph's
  own git must never run what the agent wrote), the agent's own home, and a private /tmp.
- Processes: a pid namespace of its own and --die-with-parent: the agent cannot see or signal ralph or another loop,
  and what it starts dies with it.
- Environment: only the variables the box lets through reach the agent (processes/local.py starts it with them).
- Network: `allow` the run's own namespace, whose only way out is ralph's filtering proxy (processes/box_network.py);
  `none` a namespace of the box's own (loopback only); `open` the machine's.

`Box` is the resolved plan (start/sandbox.py makes it); `bwrap_argv` is pure; `cannot_start` runs bwrap once to
see whether it works here (a bwrap that cannot make namespaces fails every command, which must be a typed error
naming the cause, never a silent loop).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.core.cancel import CancelToken
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import ProcessOutcome
from ralphloop.core.runner import Launch, OutputHook
from ralphloop.processes.local import run_agent_process

if TYPE_CHECKING:
    from ralphloop.processes.box_network import BoxNetwork

_PROBE_S = 10.0
PRIVATE = ("/tmp",)  # the box's own, empty: what the agent needs of the machine's is shown again over it
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
# `sandbox.registries`: the package registries an agent installs from (with network allow)
REGISTRIES = (
    "pypi.org:443",
    "files.pythonhosted.org:443",
    "registry.npmjs.org:443",
    "crates.io:443",
    "static.crates.io:443",
    "index.crates.io:443",
    "proxy.golang.org:443",
    "sum.golang.org:443",
    "rubygems.org:443",
    "index.rubygems.org:443",
    "repo.maven.apache.org:443",
    "repo1.maven.org:443",
)


class Box(Struct, frozen=True):
    """One sandbox, resolved: what the agent sees, may write, and is given."""

    bwrap: str  # the executable, found
    hidden: tuple[str, ...]  # folders replaced by an empty one (the user's home, ralph's own)
    shown: tuple[str, ...]  # folders under a hidden one shown again, read-only (the CLI's install, the interpreter)
    writable: tuple[str, ...]  # the worktree, the repository's git folder
    read_only: tuple[str, ...]  # under a writable one, kept read-only (.git/hooks, .git/config)
    home: str  # the agent's own home: HOME inside
    env: Mapping[str, str]  # every variable the agent gets (the allow-list applied)
    network: str  # allow (a network of its own, out only through ralph's proxy) | open | none
    masked: tuple[str, ...] = ()  # files replaced by an empty one (/etc/shadow)
    allowed: tuple[str, ...] = ()  # network allow: the host:port patterns the proxy lets through
    quiet: tuple[str, ...] = ()  # network allow: refused without a note (the CLI's telemetry: it works without)
    nsenter: str = "nsenter"  # network allow: what enters the run's network (util-linux), found
    python: str = sys.executable  # network allow: the interpreter that makes the run's network (once)
    logins: tuple[tuple[str, str], ...] = ()  # (its copy in the agent's home, the user's file): written back

    def words(self) -> list[str]:
        """What `ralph run --dry-run` says of it, a line each."""
        shown = f" (shown again, read-only: {', '.join(self.shown)})" if self.shown else ""
        return [
            f"bubblewrap ({self.bwrap}): the system read-only, a pid namespace of its own, dies with its iteration",
            f"writable: {', '.join(self.writable)}, the agent's home {self.home}, a private /tmp",
            f"read-only inside: {', '.join(self.read_only) or '-'}",
            f"hidden: {', '.join(self.hidden)}{shown}",
            f"environment: {', '.join(sorted(self.env))}",
            f"network: {self.network}"
            + (f" (out only through ralph's proxy, to {', '.join(self.allowed)})" if self.network == "allow" else "")
            + (f"; refused without a note: {', '.join(self.quiet)}" if self.quiet else ""),
        ]


def bwrap_argv(box: Box, cwd: str, *, own_user: bool = False) -> list[str]:
    """The bwrap command line that runs a command in `box`, in `cwd` (the command's argv follows it). `own_user`: it
    starts as root of a user namespace (the run's network's, entered by a user who is not root), and makes its own,
    with the user's ids."""
    argv = [box.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if own_user:
        argv += ["--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid())]
    if box.network == "none":  # allow: already in the run's network (BoxNetwork.enter)
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in box.hidden:
        argv += ["--tmpfs", folder]
    for folder in box.shown:
        argv += ["--ro-bind", folder, folder]
    for path in box.masked:
        argv += ["--ro-bind", "/dev/null", path]
    for folder in box.writable:
        argv += ["--bind", folder, folder]
    for path in box.read_only:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", box.home, box.home]
    for folder in box.hidden:  # empty and read-only: what the agent writes there fails, not vanishes
        argv += ["--remount-ro", folder]
    return [*argv, "--chdir", cwd, "--"]


def blocked_notes(blocked: tuple[str, ...]) -> list[str]:
    """The notes an iteration records for the connections the sandbox refused its agent."""
    return [f"blocked: {where} — add it to sandbox.allow_hosts" for where in blocked]


def write_back(logins: tuple[tuple[str, str], ...]) -> None:
    """After each call: a login the CLI refreshed in the box, written back to the user's home: its old refresh
    token may be spent, so the user's own CLI needs the new one."""
    for copy, original in logins:
        _newer_over(copy, original)


def read_in(logins: tuple[tuple[str, str], ...]) -> None:
    """Before each call: a login the user's own CLI refreshed since, copied into the box's home, so that the loop
    never uses a refresh token already spent outside."""
    for copy, original in logins:
        _newer_over(original, copy)


def _newer_over(source: str, target: str) -> None:
    """`source` copied over `target` when it is newer and says something else (atomically, 0600); a failure
    leaves `target` as it is (the next call tries again)."""
    try:
        if not os.path.isfile(source) or (
            os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(source)
        ):
            return
        with open(source, "rb") as handle:
            fresh = handle.read()
        if os.path.exists(target):
            with open(target, "rb") as handle:
                if handle.read() == fresh:
                    return
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        temporary = f"{target}.ralph-{os.getpid()}"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(fresh)
        os.replace(temporary, target)
    except OSError:
        return


def outermost(hidden: tuple[str, ...], wanted: list[str]) -> tuple[str, ...]:
    """The folders of `wanted` that exist under a hidden one, none inside another (shown again, read-only)."""
    real = {os.path.realpath(path) for path in wanted if path and os.path.isdir(path)}
    inside = [path for path in real if any(under(path, folder) for folder in hidden)]
    return tuple(sorted(path for path in inside if not any(under(path, other) and path != other for other in inside)))


def install_of(executable: str) -> str:
    """The folder a CLI is installed in: up to its node_modules (an npm package), else its own folder's parent."""
    parts = executable.split(os.sep)
    if "node_modules" in parts:
        return os.sep.join(parts[: len(parts) - parts[::-1].index("node_modules")])
    return os.path.dirname(os.path.dirname(executable))


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


_PROBED: dict[str, str | None] = {}  # bwrap → why it cannot start here (None: it can), asked once per process


def cannot_start(bwrap: str) -> str | None:
    """Why `bwrap` cannot run a command in the box here (None: it can): run once, in a box like the agent's."""
    if bwrap not in _PROBED:
        argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/"]
        # the program run inside is bwrap itself: there for sure, wherever PATH points (a folder the box hides)
        argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", os.path.realpath(bwrap), "--version"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=_PROBE_S, check=False, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            _PROBED[bwrap] = f"{bwrap} is not installed (Debian: apt-get install bubblewrap)"
        except (OSError, subprocess.TimeoutExpired) as exc:
            _PROBED[bwrap] = f"{bwrap} could not be run ({exc})"
        else:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            _PROBED[bwrap] = None if done.returncode == 0 else (said[-1] if said else f"exit {done.returncode}")[:300]
    return _PROBED[bwrap]


class SandboxRunner:
    """A runner (core/runner.py) that starts each command in the box, with the box's environment only."""

    name = "bwrap"

    def __init__(self, box: Box, start: Callable[..., ProcessOutcome] = run_agent_process) -> None:
        self.box = box
        self.home: str | None = box.home
        self._start = start
        self._network: BoxNetwork | None = None  # network allow: made at the first command, kept for the run
        self._making = threading.Lock()

    def network(self) -> BoxNetwork:
        """The run's network (network allow), made at the first call: a RalphError when it cannot be."""
        with self._making:
            if self._network is None:
                from ralphloop.processes.box_network import BoxNetwork  # sockets and threads: for such a run alone

                box = self.box
                self._network = BoxNetwork(box.bwrap, box.python, box.nsenter, box.allowed, box.quiet)
            return self._network

    def _showing(self, argv: tuple[str, ...]) -> Box:
        """The box, showing again what the command names that lives under a hidden folder or /tmp: the install of
        its program (a CLI in ~), and the folders of the files its arguments name (`python my_agent.py`)."""
        found = shutil.which(argv[0], path=self.box.env.get("PATH")) if argv else None
        wanted = [install_of(os.path.realpath(found))] if found else []
        wanted += [os.path.dirname(os.path.realpath(word)) for word in argv[1:] if os.path.isfile(word)]
        extra = outermost((*self.box.hidden, *PRIVATE), wanted)
        missing = tuple(path for path in extra if not any(under(path, shown) for shown in self.box.shown))
        return replace(self.box, shown=(*self.box.shown, *missing)) if missing else self.box

    def run(
        self,
        launch: Launch,
        cancel: CancelToken,
        *,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> ProcessOutcome:
        command = launch.command
        inside = {**self.box.env, **command.env, "HOME": self.box.home, "TMPDIR": "/tmp"}
        box = self._showing(command.argv)
        entering: list[str] = []
        inherited: tuple[int, ...] = ()
        network = None
        if box.network == "allow":  # in the run's network: out only through ralph's proxy
            try:
                network = self.network()
            except RalphError as exc:
                return ProcessOutcome(exit_code=None, duration_s=0.0, start_error=str(exc))
            entering, inherited = network.enter()
            inside.update(dict.fromkeys(PROXY_VARIABLES, f"http://127.0.0.1:{network.port}"))
            for name in ("NO_PROXY", "no_proxy"):
                inside.pop(name, None)  # every connection goes through the proxy, loopback included
        boxed = bwrap_argv(box, launch.cwd, own_user=network is not None and network.own_user)
        wrapped = replace(command, argv=(*entering, *boxed, *command.argv), env={})
        os.makedirs(self.box.home, mode=0o700, exist_ok=True)
        read_in(self.box.logins)
        try:
            outcome = self._start(
                wrapped,
                cwd=launch.cwd,
                log_path=launch.log_path,
                limits=launch.limits,
                cancel=cancel,
                on_stdout=on_stdout,
                on_output=on_output,
                tag=launch.tag or None,
                on_start=on_start,
                base_env=inside,
                pass_fds=inherited,
            )
        finally:
            blocked = network.proxy.take_blocked() if network is not None else ()
            write_back(self.box.logins)
        return replace(outcome, blocked=blocked) if blocked else outcome
