"""Each section of the config files as written (Settings.sections): what a plug-in reads of its own section."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ralphloop.core.errors import RalphError


def merged_sections(
    read: list[tuple[str, dict[str, Any]]], agents: tuple[str, ...], known: frozenset[str]
) -> Mapping[str, Mapping[str, Any]]:
    """Each section of the config files as written, a later file's keys over an earlier one's. An agent's
    own section must be a mapping (a plugin reads it); other sections are checked where they are read."""
    merged: dict[str, dict[str, Any]] = {}
    for label, data in read:
        for name, body in data.items():
            if isinstance(body, dict):
                merged[name] = {**merged.get(name, {}), **body}
            elif name in agents and name not in known and body is not None:
                raise RalphError(f"{label}: {name}: expected a mapping")
    return MappingProxyType({name: MappingProxyType(body) for name, body in merged.items()})
