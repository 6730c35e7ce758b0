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


def record_of(paths: FeaturePaths) -> dict[str, Any] | None:
    """Where the feature's workflow is: its temporal.json, else the config's `parallel.engine: temporal` and
    `temporal.address` with the id the repository's origin and the feature's name give (what any clone knows)."""
    record = read_json_object(paths.file(RECORD))
    if record is not None:
        return record
    from ralphloop.config.settings import load_settings
    from ralphloop.temporal.shapes import workflow_id
    from ralphloop.workspace import git

    scale = load_settings(paths.project_root, {}).scale
    if scale.engine != "temporal" or not scale.address:
        return None
    done = git.run(paths.project_root, "remote", "get-url", "origin")
    remote = done.stdout.decode().strip()
    if done.returncode != 0 or not remote:
        return None
    return {
        "address": scale.address,
        "namespace": scale.namespace or "default",
        "workflowId": workflow_id(remote, paths.name),
    }


def remote_fleet(paths: FeaturePaths) -> tuple[dict[str, Any] | None, str | None]:
    """The run's fleet as its workflow tells it, or a note saying why it cannot be shown; (None, None) when the
    feature never ran on Temporal."""
    try:
        record = record_of(paths)
    except RalphError as error:  # a config that does not load: said beside the feature's own lines
        return None, f"the parallel run on Temporal is not shown: {error}"
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
