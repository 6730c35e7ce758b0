"""`ralph status` of a parallel run on Temporal (issue 37): the feature's temporal.json names the workflow, whose
`fleet` query answers in fleet.json's shape; read as fleet.json is read (state/fleet.py's schemas), so every view
words it alike. Imported only when that file is there: a plain `ralph status` stays light."""

from __future__ import annotations

import asyncio
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.fleet import FLEET, LOOP, LOOP_STATES

RECORD = "temporal.json"


def remote_fleet(paths: FeaturePaths) -> tuple[dict[str, Any] | None, str | None]:
    """The run's fleet as its workflow tells it, or a note saying why it cannot be shown; (None, None) when the
    feature never ran on Temporal."""
    record = read_json_object(paths.file(RECORD))
    if record is None:
        return None, None
    from ralphloop.temporal.launch import query_fleet, server_in

    server, wid = server_in(record)
    try:
        raw = asyncio.run(query_fleet(server, wid))
    except RalphError as error:
        return None, f"the parallel run on Temporal is not shown: {error}"
    fleet = FLEET.load(raw)
    fleet["alive"] = bool(raw.get("alive"))
    fleet["costUsd"] = raw.get("costUsd")
    loops = []
    for item in fleet["loops"]:
        if isinstance(item, dict):
            loop = LOOP.load(item)
            loop["state"] = loop["state"] if loop["state"] in LOOP_STATES else "waiting"
            loop["report"] = None
            loops.append(loop)
    fleet["loops"] = loops
    fleet["engine"] = f"temporal: workflow {wid} on {server.address}"
    return fleet, None
