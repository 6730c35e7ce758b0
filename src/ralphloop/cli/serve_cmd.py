"""`ralph serve [-f F ...] [--port N]`: every loop of the project live in a browser, from the state files alone.

Starlette and uvicorn are an optional extra (`ralphloop[web]`), imported here only once the flags are checked.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import replace
from functools import partial

from ralphloop.cli.temporal_where import remote_fleet_for, remote_steer
from ralphloop.core.errors import RalphError
from ralphloop.project.paths import find_project_root
from ralphloop.web.snapshot import features

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

EXTRA = "pip install 'ralphloop[web]'"
_WEB_STACK = ("starlette", "uvicorn", "anyio", "h11", "click", "idna", "sniffio")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    port = _port(args.port)
    shown = features(find_project_root(), args.feature or [])
    # a parallel run on Temporal: its workflow read and told by the CLI's readers (issue 37)
    shown = replace(shown, fleets=remote_fleet_for, remote_steer=partial(remote_steer, source="web"))
    try:
        from ralphloop.web.server import listen, serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in _WEB_STACK:
            raise RalphError(f"ralph serve needs starlette and uvicorn, an optional extra: {EXTRA}") from None
        raise
    public_url = _public_url(shown.root)
    sock = listen(port)
    before = {signum: signal.signal(signum, _stop) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        serve(shown, sock, sys.stdout, public_url)
    except KeyboardInterrupt:
        pass  # uvicorn took the signal, stopped, and raised it again
    finally:
        sock.close()
        for signum, handler in before.items():
            signal.signal(signum, handler)
    print("ralph serve: stopped", file=sys.stderr)
    return 130  # as `ralph monitor` ends on Ctrl+C


def _public_url(root: str) -> str | None:
    """`serve.public_url` from the config files (the user's tunnel to the page), checked; one line when it is bad."""
    from ralphloop.config.settings import load_settings
    from ralphloop.web.server import public_address

    value = load_settings(root, {}).section("serve").get("public_url")
    try:
        return public_address(value)
    except ValueError as exc:
        raise RalphError(f"serve.public_url in the config: {exc}") from None


def _port(value: str | None) -> int:
    if value is None:
        return 0
    if not value.isdigit() or len(value) > 5 or int(value) > 65535:
        raise RalphError(f"--port {value}: not a port number (1 to 65535; 0 or none: a free one)")
    return int(value)


def _stop(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP (a closed terminal) stop it as Ctrl+C does."""
    raise KeyboardInterrupt
