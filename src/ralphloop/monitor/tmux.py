"""`ralph run --monitor`: a tmux session `ralph`, the loop and the monitor side by side on a wide window (the loop
left), stacked on a narrower one (the loop above); the window re-picks its layout whenever its size changes (a
client of another size attaches, the terminal is resized).

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
SIDE_BY_SIDE_COLUMNS = 140  # two panes of 70: narrower, each would wrap what it shows
DETACHED_SIZE = (200, 50)  # nobody is looking yet: the layout follows the window once someone attaches


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
    loop_env: Mapping[str, str] | None = None,
) -> Launched:
    """Start the two panes (a new session, or a new window in an existing `ralph` session). `loop_env`: what the
    loop's pane alone adds to `env` (never given to tmux itself, whose server would keep it for every pane)."""
    tmux = available(env) or "tmux"
    exists = _tmux(tmux, env, "has-session", "-t", f"={session}", check=False).returncode == 0
    placeholder = "exec sleep 86400"  # replaced below, once both panes have their final width
    made_ids = "#{pane_id} #{window_id} #{window_width}"
    if exists:  # the new window has the session's size, which its clients set
        made = _tmux(
            tmux, env, "new-window", "-P", "-F", made_ids, "-t", f"={session}:", "-n", format_literal(window),
            placeholder,
        )  # fmt: skip
    else:
        columns, rows = launching_size(tmux, env)
        made = _tmux(
            tmux, env, "new-session", "-d", "-P", "-F", made_ids, "-s", session, "-n", format_literal(window),
            "-x", str(columns), "-y", str(rows), placeholder,
        )  # fmt: skip
    loop_pane, window_id, width = made.stdout.split()
    panes, specs = [loop_pane], []
    try:
        across = "-h" if int(width) >= SIDE_BY_SIDE_COLUMNS else "-v"
        split = _tmux(
            tmux, env, "split-window", across, "-d", "-P", "-F", "#{pane_id}", "-t", loop_pane, placeholder
        )  # fmt: skip
        monitor_pane = split.stdout.strip()
        panes.append(monitor_pane)
        # tmux before 3.2 has no window hooks: there the layout stays as it was made
        _tmux(tmux, env, "set-hook", "-w", "-t", window_id, "window-resized", relayout(window_id), check=False)
        loop = (loop_pane, "RALPH LOOP", loop_argv, {**env, **(loop_env or {})})
        for pane, title, argv, pane_env in (loop, (monitor_pane, "MONITOR", monitor_argv, env)):
            _tmux(tmux, env, "select-pane", "-t", pane, "-T", title)
            command, spec = _pane_command(argv, cwd, pane_env, title)
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


def relayout(window_id: str) -> str:
    """The tmux command that lays the window's two panes side by side when it is wide, stacked when it is not."""
    wide = f"#{{e|>=:#{{window_width}},{SIDE_BY_SIDE_COLUMNS}}}"
    return (
        f'if-shell -F "{wide}" "select-layout -t {window_id} even-horizontal" '
        f'"select-layout -t {window_id} even-vertical"'
    )


def launching_size(tmux: str, env: Mapping[str, str]) -> tuple[int, int]:
    """The size the new session will be seen at: the tmux client's when ralph runs inside tmux (it switches that
    client to the session), else the terminal ralph was started from (it attaches there), else DETACHED_SIZE."""
    if env.get("TMUX"):
        found = _tmux(tmux, env, "display-message", "-p", "#{client_width} #{client_height}", check=False)
        size = found.stdout.split()
        if found.returncode == 0 and len(size) == 2 and all(part.isdigit() and int(part) > 0 for part in size):
            return int(size[0]), int(size[1])
    for fd in (1, 0, 2):
        with contextlib.suppress(OSError):
            columns, rows = os.get_terminal_size(fd)
            if columns > 0 and rows > 0:
                return columns, rows
    return DETACHED_SIZE


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
