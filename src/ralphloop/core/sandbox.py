"""What an agent backend needs inside the sandbox (issue 35): declared by the backend, read by the run that builds
the box (start/sandbox.py), so that the box holds the least the agent needs and nothing of the user's else.

A value only: no I/O.
"""

from __future__ import annotations

from msgspec import Struct


class SandboxNeeds(Struct, frozen=True):
    """The variables, files and hosts an agent's CLI needs to work inside the sandbox."""

    # the variables of ralph's environment that reach the agent (its credentials, its API's address, its switches)
    env: tuple[str, ...] = ()
    # files of the user's home (relative to it) copied into the agent's own home: its login, its settings
    home_files: tuple[str, ...] = ()
    # (variable, default under the home) of a config folder the CLI reads: the folder's files named in `home_files`
    # are copied from where the variable points (else the default), and the variable points into the agent's home
    config_dirs: tuple[tuple[str, str], ...] = ()
    # host:port of its vendor's API (the network's allow-list; from the API's address when a variable sets it)
    hosts: tuple[str, ...] = ()
    # host:port the CLI reaches for its own telemetry or error reports, and works without: refused, and not told on
    # every iteration's line (Codex's metrics, Claude Code's log intake)
    quiet_hosts: tuple[str, ...] = ()
    # of `home_files`, those holding a login the CLI refreshes (its refresh token used once): written back to the
    # user's home after each call, never shared by the loops of a parallel run
    logins: tuple[str, ...] = ()
    login_env: tuple[str, ...] = ()  # variables that log the CLI in without those files (a key, a long-lived token)
    login_hint: str = ""  # how to log several loops in with them ("set OPENAI_API_KEY to an API key")
    declared: bool = False  # the backend said what it needs (a backend that did not runs outside the sandbox)
