"""Where the Temporal server is and how to reach it: the address, the namespace, TLS (a CA, a client certificate for
mTLS) and an API key, which is read from an environment variable, never from a flag (a command line is shown to
every user of the machine)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ralphloop.core.errors import RalphError
from ralphloop.temporal.shapes import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from temporalio.client import Client

API_KEY_ENV = "TEMPORAL_API_KEY"
CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Server:
    address: str  # HOST:PORT
    namespace: str = DEFAULT_NAMESPACE
    tls: bool = False
    ca: str | None = None  # the server's root CA (PEM); TLS with the system's roots without it
    cert: str | None = None  # a client certificate and its key (PEM): mTLS
    key: str | None = None
    api_key_env: str = API_KEY_ENV  # the variable holding an API key (a hosted server's), if set

    def check(self, flag: str = "--temporal") -> None:
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise RalphError(f"{flag} {self.address}: not HOST:PORT (for a local dev server: 127.0.0.1:7233)")
        if (self.cert is None) != (self.key is None):
            raise RalphError("--tls-cert and --tls-key go together (a client certificate and its private key)")
        for flag_name, path in (("--tls-ca", self.ca), ("--tls-cert", self.cert), ("--tls-key", self.key)):
            if path is not None and not os.path.isfile(path):
                raise RalphError(f"{flag_name} {path}: no such file")


async def connect(server: Server, identity: str | None = None) -> Client:
    """A client of the server; a one-line RalphError when it cannot be reached."""
    from datetime import timedelta

    from temporalio.client import Client
    from temporalio.service import TLSConfig

    tls: bool | TLSConfig = False
    if server.tls or server.ca or server.cert:
        tls = TLSConfig(
            server_root_ca_cert=_read(server.ca),
            client_cert=_read(server.cert),
            client_private_key=_read(server.key),
        )
    try:
        return await Client.connect(
            server.address,
            namespace=server.namespace,
            tls=tls,
            api_key=os.environ.get(server.api_key_env) or None,
            identity=identity,
            connect_timeout=timedelta(seconds=CONNECT_TIMEOUT_S),
        )
    except RuntimeError as error:  # the core SDK's "Failed client connect: ..."
        raise RalphError(f"cannot reach the Temporal server at {server.address}: {_first_line(error)}") from None


def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    with open(path, "rb") as handle:
        return handle.read(1 << 20)


def _first_line(error: BaseException) -> str:
    """The reason the core SDK gives, without its Rust error's nesting (`message: "Connection refused"`)."""
    import re

    text = str(error).strip()
    said = re.findall(r'message: "([^"]{1,200})"', text)
    if said:
        return str(said[-1])
    lines = text.splitlines()
    return lines[0][:300] if lines else "no answer"
