"""A run's Policy with some knobs changed, as a test asks for them by name: a knob of the loop's or the agent's
settings goes into that section (Policy holds the sections as config/settings.py resolved them)."""

from __future__ import annotations

from typing import Any

from msgspec.structs import fields, replace

from ralphloop.config.policy import AgentSettings, LoopSettings, Policy

_LOOP = {field.name for field in fields(LoopSettings)}
_AGENT = {field.name for field in fields(AgentSettings)}


def tuned(policy: Policy, **knobs: Any) -> Policy:
    loop = {key: value for key, value in knobs.items() if key in _LOOP}
    agent = {key: value for key, value in knobs.items() if key in _AGENT}
    rest = {key: value for key, value in knobs.items() if key not in _LOOP and key not in _AGENT}
    return replace(
        policy,
        loop=replace(policy.loop, **loop),
        agent=replace(policy.agent, **agent),
        **rest,
    )
