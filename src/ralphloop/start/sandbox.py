"""Which sandbox a run's agent gets (issue 35, `--sandbox auto|bwrap|off`, `sandbox:` in config), and the box built
for it (processes/sandbox.py runs commands in it).

`auto` (the default) boxes the agent when bubblewrap works here and the agent's backend says what it needs inside
(`Agent.sandbox`, core/sandbox.py), and otherwise runs it as before, with one warning saying why; `bwrap` refuses to
start without the box, in one line naming the cause; `off` runs as before.

The box: the user's home and ralph's own folder hidden (shown again, read-only: the interpreter, the folders on PATH
and the agent's CLI where they live under them), the worktree and its git folder writable but for the hooks and the
config, the agent's own home (`<ralph home>/sandbox/<worktree's key>/home`: each loop of a parallel run its own),
seeded with the files of the user's home its backend names (its login, its settings) and nothing else, and an
environment of the variables it needs alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Mapping

import ralphloop
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Agent
from ralphloop.core.sandbox import SandboxNeeds
from ralphloop.processes import reaper
from ralphloop.processes.sandbox import PRIVATE, REGISTRIES, Box, cannot_start, outermost, under
from ralphloop.processes.sandbox_settings import SandboxSettings
from ralphloop.project.paths import ralph_home
from ralphloop.workspace import git

# What reaches every agent: where to find programs, how to speak, the terminal; and what ralph sets for a loop.
BASE_ENV = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR", "USER", "LOGNAME", "SHELL")
RALPH_ENV = ("RALPH_SLOT", "RALPH_PORT_BASE", "RALPH_PORT_COUNT", reaper.TAG_VAR)
_QUIET = "--sandbox off chooses that and hides this warning"
_MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")  # root can read them; an agent need not


def sandbox_for(
    settings: SandboxSettings,
    agent: Agent,
    top: str,
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
    *,
    loops: bool = False,
) -> Box | None:
    """The box for `agent` working in the worktree `top`, or None (no sandbox: off, or `auto` where it cannot be,
    said once through `warn`). `--sandbox bwrap` that cannot be is a RalphError naming the cause; so is a login the
    CLI refreshes that the loops of a parallel run (`loops`) would share."""
    if settings.mode == "off":
        return None
    environ = os.environ if environ is None else environ
    bwrap = shutil.which(settings.bwrap, path=environ.get("PATH")) or settings.bwrap
    nsenter = shutil.which("nsenter", path=environ.get("PATH")) if settings.network == "allow" else None
    why = _why_not(agent, bwrap, settings.network, nsenter)
    if why is not None:
        if settings.mode == "bwrap":
            raise RalphError(f"--sandbox bwrap: {why}")
        warn(f"the agent runs without the sandbox: {why} ({_QUIET})")
        return None
    home = os.path.join(ralph_home(), "sandbox", _key(top), "home")
    logins = _logins(agent, environ, home)
    if logins and loops:
        why = _shared_login(agent.sandbox, logins[0][1])
        if settings.mode == "bwrap":
            raise RalphError(f"--sandbox bwrap: {why}")
        warn(f"the agents run without the sandbox: {why} ({_QUIET})")
        return None
    env = {**_environment(settings, agent.sandbox, environ, home), **_git_identity(top, environ)}
    hidden = _hidden(environ)
    writable, read_only = _git_folders(top)
    return Box(
        bwrap=bwrap,
        hidden=hidden,
        shown=_shown(hidden, environ),
        writable=writable,
        read_only=read_only,
        home=home,
        env=env,
        network=settings.network,
        masked=tuple(path for path in _MASKED if os.path.exists(path)),
        allowed=_allowed(settings, agent.sandbox) if settings.network == "allow" else (),
        quiet=agent.sandbox.quiet_hosts if settings.network == "allow" else (),
        nsenter=nsenter or "nsenter",
        logins=logins,
    )


def _logins(agent: Agent, environ: Mapping[str, str], home: str) -> tuple[tuple[str, str], ...]:
    """The login files the CLI refreshes that this run would copy in (none when a variable logs it in)."""
    needs = agent.sandbox
    if any(environ.get(name) for name in needs.login_env):
        return ()
    user_home = os.path.expanduser("~")
    pairs = [(os.path.join(home, path), _config_source(path, needs, environ, user_home)) for path in needs.logins]
    return tuple((copy, original) for copy, original in pairs if os.path.isfile(original))


def _shared_login(needs: SandboxNeeds, original: str) -> str:
    """Why the loops of a parallel run cannot share the CLI's login, and how to log them in (the backend says)."""
    return (
        f"{original} is a login whose refresh token is used once, and the loops of a parallel run cannot share it "
        f"in boxes of their own; log them in another way: {needs.login_hint or 'with a key'}"
    )


def _allowed(settings: SandboxSettings, needs: SandboxNeeds) -> tuple[str, ...]:
    """What the proxy lets through: the agent's API, the registries (unless sandbox.registries: false), and
    sandbox.allow_hosts."""
    registries = REGISTRIES if settings.registries else ()
    return tuple(dict.fromkeys((*needs.hosts, *registries, *settings.allow_hosts)))


def seed_home(box: Box, needs: SandboxNeeds, environ: Mapping[str, str] | None = None) -> None:
    """The agent's own home made, with copies of the files of the user's home its backend names (a file newer in
    the user's home replaces the copy: a login renewed outside reaches the loop)."""
    environ = os.environ if environ is None else environ
    user_home = os.path.expanduser("~")
    os.makedirs(box.home, mode=0o700, exist_ok=True)
    for relative in needs.home_files:
        source = _config_source(relative, needs, environ, user_home)
        target = os.path.join(box.home, relative)
        if not os.path.isfile(source) or os.path.islink(source):
            continue
        if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(source):
            continue
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, 0o600)


def _why_not(agent: Agent, bwrap: str, network: str, nsenter: str | None) -> str | None:
    if not agent.sandbox.declared:
        return f"the {agent.name} agent does not say yet what it needs inside it (its login, its API's hosts)"
    if network == "allow" and nsenter is None:
        return "sandbox.network allow needs nsenter (Debian: util-linux); sandbox.network none or open needs none"
    return cannot_start(bwrap)


def _environment(
    settings: SandboxSettings, needs: SandboxNeeds, environ: Mapping[str, str], home: str
) -> dict[str, str]:
    """The variables that reach the agent: the allow-list's, its backend's, sandbox.env's; a config folder's
    variable pointing into its own home."""
    names = {*BASE_ENV, *RALPH_ENV, *needs.env, *settings.env}
    env = {name: value for name, value in environ.items() if name in names or name.startswith("LC_")}
    for variable, default in needs.config_dirs:
        env[variable] = os.path.join(home, default)
    return env


_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def _git_identity(top: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Who the agent commits as: the user's git identity (their ~/.gitconfig is hidden in the box, and nothing else
    of it need reach the agent), from the variables that set it, else from git's config as the user has it; given
    as the variables git commits with, and as `user.name` / `user.email` through GIT_CONFIG_COUNT, for a CLI that
    asks `git config` (aider, finding none, writes one into .git/config, which the box keeps read-only)."""
    found = {name: environ[name] for name in _IDENTITY if environ.get(name)}
    if len(found) < len(_IDENTITY):
        done = git.run(top, "config", "--get-regexp", r"^user\.(name|email)$", hooks=True)
        for line in done.stdout.decode("utf-8", "replace").splitlines() if done.returncode == 0 else ():
            key, _, value = line.partition(" ")
            for name in _IDENTITY[0::2] if key == "user.name" else _IDENTITY[1::2]:
                if value and name not in found:
                    found[name] = value
    config = [
        (key, found.get(author) or found.get(committer, ""))
        for key, author, committer in (("user.name", *_IDENTITY[0::2]), ("user.email", *_IDENTITY[1::2]))
    ]
    config = [(key, value) for key, value in config if value]
    for number, (key, value) in enumerate(config):
        found[f"GIT_CONFIG_KEY_{number}"] = key
        found[f"GIT_CONFIG_VALUE_{number}"] = value
    if config:
        found["GIT_CONFIG_COUNT"] = str(len(config))
    return found


def _config_source(relative: str, needs: SandboxNeeds, environ: Mapping[str, str], user_home: str) -> str:
    """Where a file the backend names comes from: its config folder's variable's folder, else the user's home."""
    for variable, default in needs.config_dirs:
        prefix = default.rstrip("/") + "/"
        if relative.startswith(prefix) and environ.get(variable):
            return os.path.join(environ[variable], relative[len(prefix) :])
    return os.path.join(user_home, relative)


def _hidden(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The user's home and ralph's own folder (when it is elsewhere): replaced by an empty folder inside."""
    found = [os.path.realpath(environ.get("HOME") or os.path.expanduser("~")), os.path.realpath(ralph_home())]
    kept: list[str] = []
    for folder in sorted(set(found), key=len):
        if folder not in ("/", "") and not any(under(folder, other) for other in kept):
            kept.append(folder)
    return tuple(kept)


def _shown(hidden: tuple[str, ...], environ: Mapping[str, str]) -> tuple[str, ...]:
    """What the agent must run that lives under a hidden folder, shown again read-only: the interpreter (a Python
    agent), ralph's own package and every folder on PATH (the runner adds each command's own install)."""
    # ralph's own package too: an editable install's source lies outside the interpreter's folders (the scripted
    # agent and the command agents' `ralph signal` run it)
    package = os.path.dirname(os.path.dirname(os.path.abspath(ralphloop.__file__)))
    wanted = [sys.prefix, sys.base_prefix, package, *environ.get("PATH", "").split(os.pathsep)]
    return outermost((*hidden, *PRIVATE), wanted)


def _git_folders(top: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What is writable: the worktree, and the repository's git folder when it lies outside it (a linked worktree's:
    the commits and refs are written there); and what stays read-only in them: the git hooks and config (what is
    there is the user's, and ralph's git may run it). One git process."""
    worktree = os.path.realpath(top)
    asked = ("--git-common-dir", "--git-path", "hooks", "--git-path", "config", "--git-path", "config.worktree")
    done = git.run(top, "rev-parse", *asked, hooks=True)
    if done.returncode != 0:
        return (worktree,), ()
    common, *guarded = (
        os.path.realpath(os.path.join(top, line))
        for line in done.stdout.decode("utf-8", "surrogateescape").splitlines()
    )
    writable = (worktree,) if under(common, worktree) else (worktree, common)
    return writable, tuple(path for path in guarded if os.path.exists(path))


def _key(top: str) -> str:
    """A folder's name for the worktree: its base name and a hash of its path (each loop its own home)."""
    real = os.path.realpath(top)
    return f"{os.path.basename(real) or 'root'}-{hashlib.sha256(real.encode()).hexdigest()[:12]}"
