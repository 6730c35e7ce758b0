"""The `parallel:` and `temporal:` settings (issue 37): where a parallel run's loops run. config/settings.py reads
them through SCALE_TABLE, as it reads every section.

    parallel:
      engine: temporal           # local (the default: child processes here) | temporal (`ralph worker`s)
    temporal:
      address: 127.0.0.1:7233    # HOST:PORT (--temporal; $RALPH_TEMPORAL_ADDRESS)
      namespace: default
      queue: ralph               # the task queue the workers poll (ralph worker --queue)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

from ralphloop.words import values

ENGINES = ("local", "temporal")


def engine(value: Any) -> str:
    return values.choice(value, ENGINES)


def address(value: Any) -> str:
    text = str(value).strip()
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT (a local dev server: 127.0.0.1:7233)")
    return text


def name(value: Any) -> str:
    text = str(value).strip()
    if not text or len(text) > 200 or any(ch.isspace() for ch in text):
        raise ValueError(f"{text!r}: expected a name without spaces")
    return text


# settings key → (path in the config files, environment variable, converter, default)
SCALE_TABLE: dict[str, tuple[tuple[str, ...], str | None, Callable[[Any], Any], Any]] = {
    "parallel_engine": (("parallel", "engine"), "RALPH_PARALLEL_ENGINE", engine, "local"),
    "temporal_address": (("temporal", "address"), "RALPH_TEMPORAL_ADDRESS", address, None),
    "temporal_namespace": (("temporal", "namespace"), None, name, None),
    "temporal_queue": (("temporal", "queue"), None, name, None),
}
SCALE_FIELDS = {
    "parallel_engine": "engine",
    "temporal_address": "address",
    "temporal_namespace": "namespace",
    "temporal_queue": "queue",
}


class ScaleSettings(Struct, frozen=True):
    """Where a parallel run's loops run: here, or on the workers of a Temporal server."""

    engine: str = "local"
    address: str | None = None
    namespace: str | None = None
    queue: str | None = None
