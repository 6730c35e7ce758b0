"""The `sandbox:` settings (issue 35) and their rows of the settings table (config/settings.py reads them, as it
reads notify/settings.py's): `--sandbox` / `sandbox.mode`, `sandbox.network`, `sandbox.registries`,
`sandbox.allow_hosts`, `sandbox.env`, `sandbox.bwrap`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

from ralphloop.words import values

# settings key → (path in the config files, environment variable, converter, default)
SANDBOX_TABLE: dict[str, tuple[tuple[str, ...], str | None, Callable[[Any], Any], Any]] = {
    "sandbox_mode": (("sandbox", "mode"), "RALPH_SANDBOX", values.sandbox_mode, "auto"),
    "sandbox_network": (("sandbox", "network"), None, values.sandbox_network, "allow"),
    "sandbox_registries": (("sandbox", "registries"), None, values.flag, True),
    "sandbox_allow_hosts": (("sandbox", "allow_hosts"), None, values.host_patterns, ()),
    "sandbox_env": (("sandbox", "env"), None, values.variable_names, ()),
    "sandbox_bwrap": (("sandbox", "bwrap"), None, values.text, "bwrap"),
}
SANDBOX_FIELDS = {key: key.removeprefix("sandbox_") for key in SANDBOX_TABLE}  # settings key → field


class SandboxSettings(Struct, frozen=True):
    """The `sandbox:` settings and `--sandbox`."""

    # auto: bwrap when it works here and the agent's backend says what it needs (else one warning, and none) | bwrap
    # (refused in one line when it cannot be) | off
    mode: str = "auto"
    network: str = "allow"  # allow: the agent's API hosts, the registries, allow_hosts | open | none
    registries: bool = True  # the package registries' preset, with network allow
    allow_hosts: tuple[str, ...] = ()  # host:port patterns, with network allow
    env: tuple[str, ...] = ()  # more variables of ralph's environment that reach the agent
    bwrap: str = "bwrap"  # the executable
