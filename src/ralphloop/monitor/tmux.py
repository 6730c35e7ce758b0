"""`ralph run --monitor`: a tmux session `ralph`, the loop in the left pane and the monitor in the right.

Panes are addressed by their ids (`%3`), never by index, so the user's base-index and
pane-base-index settings do not matter. The commands the panes run carry no secrets on their
command line: each pane starts `python -m ralphloop.monitor.pane SPEC`, and SPEC, a private
(0600) file the pane deletes as soon as it has read it, holds the argv, folder and environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ralphloop.monitor.pane import PANE_OWN

SESSION = "ralph"


@dataclass(frozen=True, slots=True)
class Launched:
    session: str
    loop_pane: str
    monitor_pane: str


def available(env: Mapping[str, str] | None = None) -> str | None:
    """The tmux executable, or None when there is none on PATH."""
    return shutil.which("tmux", path=(env or os.environ).get("PATH"))


def launch(
    loop_argv: Sequence[str],
    monitor_argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    window: str,
    session: str = SESSION,
) -> Launched:
    """Start the two panes (a new session, or a new window in an existing `ralph` session)."""
    tmux = available(env) or "tmux"
    exists = _tmux(tmux, env, "has-session", "-t", f"={session}", check=False).returncode == 0
    placeholder = "exec sleep 86400"  # replaced below, once both panes have their final width
    if exists:
        made = _tmux(
            tmux, env, "new-window", "-P", "-F", "#{pane_id}", "-t", f"={session}:", "-n", format_literal(window),
            placeholder,
        )  # fmt: skip
    else:
        made = _tmux(
            tmux, env, "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", session, "-n", format_literal(window),
            "-x", "200", "-y", "50", placeholder,
        )  # fmt: skip
    loop_pane = made.stdout.strip()
    panes, specs = [loop_pane], []
    try:
        split = _tmux(
            tmux, env, "split-window", "-h", "-d", "-P", "-F", "#{pane_id}", "-t", loop_pane, placeholder
        )  # fmt: skip
        monitor_pane = split.stdout.strip()
        panes.append(monitor_pane)
        for pane, title, argv in ((loop_pane, "RALPH LOOP", loop_argv), (monitor_pane, "MONITOR", monitor_argv)):
            _tmux(tmux, env, "select-pane", "-t", pane, "-T", title)
            command, spec = _pane_command(argv, cwd, env, title)
            specs.append(spec)
            _tmux(tmux, env, "respawn-pane", "-k", "-t", pane, command)
        _tmux(tmux, env, "select-pane", "-t", loop_pane)
    except OSError:
        for pane in panes:  # leave no half-made window behind
            _tmux(tmux, env, "kill-pane", "-t", pane, check=False)
        for spec in specs:  # nor a copy of the environment (a pane deletes its spec once it has read it)
            with contextlib.suppress(OSError):
                os.unlink(spec)
        raise
    return Launched(session=session, loop_pane=loop_pane, monitor_pane=monitor_pane)


def format_literal(text: str) -> str:
    """`text` as tmux shows it literally where it expands formats (a window name): `#(cmd)` would run cmd."""
    return text.replace("#", "##")


def attach(session: str, env: Mapping[str, str]) -> int:
    """Show the session on this terminal: attach, or switch this client when already inside tmux."""
    tmux = available(env) or "tmux"
    verb = ["switch-client", "-t", f"={session}"] if env.get("TMUX") else ["attach-session", "-t", f"={session}"]
    return subprocess.run([tmux, *verb], env=dict(env), check=False).returncode


def _pane_command(argv: Sequence[str], cwd: str, env: Mapping[str, str], title: str) -> tuple[str, str]:
    """The command a pane runs, and the spec file it reads (private, 0600, deleted by the pane)."""
    spec = {"argv": list(argv), "cwd": cwd, "env": {k: v for k, v in env.items() if k not in PANE_OWN}, "title": title}
    fd, path = tempfile.mkstemp(prefix="ralph-pane-", suffix=".json")  # created 0600
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(spec, handle)
    return shlex.join([sys.executable, "-m", "ralphloop.monitor.pane", path]), path


def _tmux(tmux: str, env: Mapping[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [tmux, *args], env=dict(env), capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    if check and done.returncode != 0:
        raise OSError(f"tmux {args[0]} failed: {done.stderr.strip() or f'exit {done.returncode}'}")
    return done
