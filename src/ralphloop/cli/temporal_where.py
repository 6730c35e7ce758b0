"""Whether a feature's parallel run is on Temporal, decided with os alone (issue 37): `ralph status` and the monitor
ask it before they would import the client or read the config."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ralphloop.project.paths import FeaturePaths


def maybe_on_temporal(paths: FeaturePaths, fleet: dict[str, object] | None) -> bool:
    """Whether the feature's last parallel run may be on Temporal, with os alone (the client and the config's
    reader are heavy): its temporal.json (this clone started it; newer than a local run's fleet.json), or, with no
    local run, a project config that says `engine: temporal`."""
    record = paths.file("temporal.json")
    if fleet is not None:
        if fleet.get("alive") or not os.path.isfile(record):
            return False
        return os.path.getmtime(record) >= os.path.getmtime(paths.file("fleet.json"))
    if os.path.isfile(record):
        return True
    try:
        with open(os.path.join(paths.project_root, ".ralph", "config.yaml"), "rb") as handle:
            return b"engine: temporal" in handle.read(1 << 20)
    except OSError:
        return False


def remote_fleet_for(
    paths: FeaturePaths, fleet: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None] | None:
    """The workflow's fleet when the feature's last parallel run is on Temporal (the page's reader), else None."""
    if not maybe_on_temporal(paths, fleet):
        return None
    from ralphloop.cli.temporal_status import remote_fleet

    return remote_fleet(paths)


def fleet_reader(paths: FeaturePaths) -> tuple[dict[str, Any] | None, str | None]:
    """The feature's parallel run for a view (the monitor, the page): its fleet.json, or its workflow on Temporal
    when that run is the newer (state/fleet.read_fleet_noted's shape either way)."""
    from ralphloop.state.fleet import read_fleet_noted

    fleet, note = read_fleet_noted(paths)
    if note is None and maybe_on_temporal(paths, fleet):
        from ralphloop.cli.temporal_status import remote_fleet

        return remote_fleet(paths)
    return fleet, note


def remote_steer(paths: FeaturePaths, action: str, text: str, now: bool, story: str | None, source: str) -> str | None:
    """The user's request sent to the feature's workflow, and what it does now; None when no run of the feature is
    on Temporal (a loop or a parallel run here comes first): the caller carries it out here."""
    from ralphloop.files.read import lock_holder_alive
    from ralphloop.state.fleet import read_fleet

    fleet = read_fleet(paths)
    if (fleet is not None and fleet["alive"]) or lock_holder_alive(paths.lock) is not None:
        return None
    from ralphloop.cli.temporal_steer import on_temporal, steer_remote

    if not on_temporal(paths):
        return None
    return steer_remote(paths, action, text, now=now, story=story, source=source)
