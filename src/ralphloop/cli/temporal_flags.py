"""The Temporal server and queue a command means (issue 37): its flags first, then the project's config
(`temporal.address`, `temporal.namespace`, `temporal.queue`), then Temporal's own variables (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE), as the `temporal` CLI reads them."""

from __future__ import annotations

import argparse
import importlib.util
import os
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.temporal.server import Server
from ralphloop.temporal.shapes import DEFAULT_NAMESPACE, DEFAULT_QUEUE


def needs_extra() -> None:
    if importlib.util.find_spec("temporalio") is None:
        raise RalphError("Temporal needs the optional extra: pip install 'ralphloop[temporal]'")


def server_of(args: argparse.Namespace, config: Any) -> Server:
    address = getattr(args, "temporal", None) or _set(config, "address") or os.environ.get("TEMPORAL_ADDRESS")
    if not address:
        raise RalphError("give the Temporal server's address: --temporal HOST:PORT (or $TEMPORAL_ADDRESS)")
    namespace = (
        getattr(args, "namespace", None)
        or _set(config, "namespace")
        or os.environ.get("TEMPORAL_NAMESPACE")
        or DEFAULT_NAMESPACE
    )
    server = Server(
        address=address,
        namespace=namespace,
        tls=bool(getattr(args, "tls", False)),
        ca=getattr(args, "tls_ca", None),
        cert=getattr(args, "tls_cert", None),
        key=getattr(args, "tls_key", None),
        api_key_env=getattr(args, "api_key_env", None) or "TEMPORAL_API_KEY",
    )
    server.check()
    return server


def queue_of(args: argparse.Namespace, config: Any) -> str:
    queue = getattr(args, "queue", None) or _set(config, "queue") or DEFAULT_QUEUE
    if not queue or len(queue) > 200 or any(ch.isspace() for ch in queue):
        raise RalphError(f"--queue {queue!r}: a task queue's name, without spaces")
    return str(queue)


def _set(config: Any, name: str) -> str | None:
    value = getattr(config, name, None) if config is not None else None
    return str(value) if value else None
