"""`ralph worker`'s flags (issue 37), and the Temporal server's, which `ralph run --temporal` shares."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ralphloop.core.errors import RalphError


def add_server_flags(parser: Any, *, address: bool) -> None:
    """How to reach the server: TLS and an API key for a hosted one (the key from a variable, never a flag)."""
    server = parser.add_argument_group("the Temporal server")
    if address:
        server.add_argument("--temporal", metavar="HOST:PORT", help="the server's address (default: $TEMPORAL_ADDRESS)")
    server.add_argument("--namespace", metavar="NS", help="its namespace (default: $TEMPORAL_NAMESPACE or default)")
    server.add_argument("--tls", action="store_true", help="connect with TLS (the system's root certificates)")
    server.add_argument("--tls-ca", metavar="FILE", help="the server's root CA (PEM); implies --tls")
    server.add_argument("--tls-cert", metavar="FILE", help="a client certificate for mTLS (PEM), with --tls-key")
    server.add_argument("--tls-key", metavar="FILE", help="its private key (PEM)")
    server.add_argument(
        "--api-key-env",
        metavar="VAR",
        default="TEMPORAL_API_KEY",
        help="the environment variable holding an API key (default: TEMPORAL_API_KEY)",
    )


def add_worker(commands: Any) -> None:
    worker = commands.add_parser(
        "worker",
        help="run story loops for parallel runs on a Temporal server (this machine's share)",
        description="Run the story loops and merges of `ralph run --parallel N --temporal` on this machine: each in "
        "a clone of the repository under --workdir, in its own sandbox, its work pushed back to the repository's "
        "remote as it goes. Start one on each machine; a machine that dies hands its stories to the others. Needs "
        "the optional extra: pip install 'ralphloop[temporal]'.",
        epilog="examples:\n  ralph worker --temporal 127.0.0.1:7233 --slots 2\n"
        "  TEMPORAL_API_KEY=... ralph worker --temporal NS.tmprl.cloud:7233 --namespace NS --tls",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_server_flags(worker, address=True)
    work = worker.add_argument_group("the work")
    work.add_argument("--queue", metavar="NAME", help="the task queue to take work from (default: ralph)")
    work.add_argument("--slots", metavar="N", help="loops at once on this machine (default: 2)")
    work.add_argument("--workdir", metavar="DIR", help="where the clones live (default: ~/.ralph/worker)")
    worker.set_defaults(handler="worker")


def slots_of(text: str | None) -> int:
    value = text or "2"
    if not value.isdigit() or not 1 <= int(value) <= 32:
        raise RalphError(f"--slots {value}: give a whole number of loops from 1 to 32")
    return int(value)


def workdir_of(text: str | None) -> str:
    if text:
        return os.path.abspath(os.path.expanduser(text))
    home = os.environ.get("RALPH_HOME") or os.path.join(os.path.expanduser("~"), ".ralph")
    return os.path.join(home, "worker")
