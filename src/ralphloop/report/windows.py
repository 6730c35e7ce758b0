"""What the work spent of the agent accounts' usage windows (issue 34), from the metrics lines: each story's share of
each window (the change in utilization over its iterations: each call's reading less the one the book held before
it), and each window's share over time with the run's cap, for the HTML report's chart.

The accounts are shared: another loop's or a person's use between two readings counts toward the call that read the
second one. A call that had no earlier reading to compare with (the account's first in the book) adds nothing, and
the share says it is partial. Pure, stdlib only, as the rest of the receipt.
"""

from __future__ import annotations

from dataclasses import dataclass

from ralphloop.words.textsafe import clean_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


@dataclass(frozen=True, slots=True)
class WindowShare:
    """One story's share of one window of one agent's account."""

    agent: str
    window: str
    share: float  # 0..1: the sum of its calls' rises in utilization
    partial: bool  # some of its calls had no earlier reading: the share is at least this


@dataclass(frozen=True, slots=True)
class WindowSeries:
    """One window of one agent's account over time: (when read, utilization), oldest first, and the run's cap."""

    agent: str
    window: str
    points: tuple[tuple[str, float], ...]
    cap: float | None


def shares(lines: Sequence[Mapping[str, Any]]) -> tuple[WindowShare, ...]:
    """The share of each window the calls of `lines` (one story's) used, in the order the windows first appear."""
    total: dict[tuple[str, str], float] = {}
    partial: set[tuple[str, str]] = set()
    for line in lines:
        for name, reading in _readings(line):
            key = (_agent(line), name)
            total.setdefault(key, 0.0)
            before = _share(reading.get("before"))
            if before is None:
                partial.add(key)
            else:
                total[key] += max(0.0, float(reading["utilization"]) - before)
    return tuple(WindowShare(agent, name, share, (agent, name) in partial) for (agent, name), share in total.items())


def series(lines: Sequence[Mapping[str, Any]]) -> tuple[WindowSeries, ...]:
    """Each window's readings over the lines (their order in the file), with the cap the last run that read it set."""
    points: dict[tuple[str, str], list[tuple[str, float]]] = {}
    caps: dict[tuple[str, str], float | None] = {}
    for line in lines:
        stamp = line.get("timestamp")
        for name, reading in _readings(line):
            key = (_agent(line), name)
            if isinstance(stamp, str):
                points.setdefault(key, []).append((stamp, float(reading["utilization"])))
            given = line.get("window_caps")
            given = given if isinstance(given, dict) else {}
            caps[key] = _share(given.get(name, given.get("all")))
    return tuple(
        WindowSeries(agent, name, tuple(seen), caps.get(key)) for key, seen in points.items() for agent, name in [key]
    )


def _readings(line: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A line's windows that have a share (an agent can write the file: anything else is left out)."""
    windows = line.get("windows")
    if not isinstance(windows, dict):
        return []
    return [
        (clean_text(str(name))[:40], reading)
        for name, reading in windows.items()
        if isinstance(reading, dict) and _share(reading.get("utilization")) is not None
    ]


def _agent(line: Mapping[str, Any]) -> str:
    return clean_text(str(line.get("agent") or ""))[:40] or "agent"


def _share(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)
