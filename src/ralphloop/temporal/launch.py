"""`ralph run --parallel N --temporal HOST:PORT` (issue 37): the feature checked here as a local parallel run checks
it, its branch checked on the remote the workers clone, then its workflow started, or attached to when it runs
already (its id is the repository's and the feature's). The client follows the run's lines until it ends, or
returns at once with --detach; Ctrl+C leaves the run going: the workflow, not this process, is the coordinator."""

from __future__ import annotations

import asyncio
import getpass
import json
import socket
import sys
from collections.abc import Callable
from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.core.exitcodes import ExitReason
from ralphloop.files.store import atomic_write_bytes
from ralphloop.fleet.context import Fleet
from ralphloop.temporal.server import Server, connect
from ralphloop.temporal.shapes import WORKFLOW, FeatureSpec, Steer, shareable, workflow_id
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.workspace import git

FOLLOW_EVERY_S = 0.5
AWAY_RETRY_S = 2.0  # a server that does not answer is asked again this often (Ctrl+C leaves the run going)


def remote_of(fleet: Fleet) -> str:
    """The URL the workers clone: the feature branch's upstream remote, else origin."""
    root = fleet.root
    name = git.run(root, "config", f"branch.{fleet.feature_branch}.remote").stdout.decode().strip() or "origin"
    done = git.run(root, "remote", "get-url", name)
    url = done.stdout.decode().strip()
    if done.returncode != 0 or not url:
        raise RalphError(
            f"--temporal: the workers clone the repository from its remote, and it has no remote {name!r} "
            "(git remote add origin URL)"
        )
    return shareable(url)  # what the workers clone, and the workflow's history keeps: never a password or token


def check_pushed(fleet: Fleet, remote: str) -> None:
    """The loops start from the remote's feature branch: it must hold what is committed here."""
    branch = fleet.feature_branch
    mine = git.run(fleet.root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}").stdout.decode().strip()
    listed = git.run(fleet.root, "ls-remote", "--heads", remote, f"refs/heads/{branch}")
    if listed.returncode != 0:
        raise RalphError(f"--temporal: cannot read {remote}: {git.reason(listed)}")
    theirs = listed.stdout.decode().split("\t")[0].strip()
    if not theirs:
        raise RalphError(
            f"--temporal: the branch {branch} is not on {remote}, where the workers start: git push -u origin {branch}"
        )
    if theirs == mine:
        return
    git.run(fleet.root, "fetch", "-q", remote, f"refs/heads/{branch}")
    behind = git.run(fleet.root, "merge-base", "--is-ancestor", mine, theirs).returncode == 0
    if not behind:
        raise RalphError(
            f"--temporal: {branch} here has commits {remote} lacks; the workers start from the remote's: "
            f"git push origin {branch}"
        )


def spec_of(fleet: Fleet, remote: str, argv: list[str], flags: dict[str, tuple[Any, str]], queue: str) -> FeatureSpec:
    budget = fleet.budget
    import os

    return FeatureSpec(
        remote=remote,
        feature=fleet.paths.name,
        branch=fleet.feature_branch,
        argv=list(argv),
        sub=fleet.sub,
        flags={key: [value, label] for key, (value, label) in flags.items()},
        parallel=fleet.parallel,
        max_attempts=fleet.max_attempts,
        queue=queue,
        max_cost_usd=budget.max_cost_usd if budget else None,
        max_tokens=budget.max_tokens if budget else None,
        max_runtime_s=budget.max_runtime_s if budget else None,
        stop_when_held=fleet.stop_when_held,
        heartbeat_s=_heartbeat(),
        started_by=f"{getpass.getuser()}@{socket.gethostname()}:{os.getpid()}",
    )


RECORD = (
    "temporal.json"  # in the feature's folder: where its run's workflow is, for `ralph status` and the steer commands
)


def _heartbeat() -> float:
    """How often a loop's worker says it lives ($RALPH_TEMPORAL_HEARTBEAT, seconds): a dead worker's story moves
    after three missed."""
    import os

    text = os.environ.get("RALPH_TEMPORAL_HEARTBEAT", "").strip()
    try:
        value = float(text) if text else 10.0
    except ValueError:
        raise RalphError(f"$RALPH_TEMPORAL_HEARTBEAT {text!r}: a number of seconds") from None
    if not 0.5 <= value <= 600:
        raise RalphError(f"$RALPH_TEMPORAL_HEARTBEAT {text!r}: from 0.5 to 600 seconds")
    return value


def start(server: Server, spec: FeatureSpec, detach: bool, record: str) -> int:
    return asyncio.run(_start(server, spec, detach, record))


def remember(server: Server, spec: FeatureSpec, record: str) -> None:
    """Where the run's workflow is, written before it starts: `ralph status` here asks it from then on."""
    body = {
        "workflowId": workflow_id(spec.remote, spec.feature),
        "address": server.address,
        "namespace": server.namespace,
        "tls": server.tls,
        "tlsCa": server.ca,
        "tlsCert": server.cert,
        "tlsKey": server.key,
        "apiKeyEnv": server.api_key_env,
        "queue": spec.queue,
        "remote": spec.remote,
    }
    atomic_write_bytes(record, json.dumps(body, indent=2).encode() + b"\n")


def server_in(record: dict[str, Any]) -> tuple[Server, str]:
    """The server and workflow id a record names."""
    server = Server(
        address=str(record.get("address") or ""),
        namespace=str(record.get("namespace") or "default"),
        tls=bool(record.get("tls")),
        ca=_text(record.get("tlsCa")),
        cert=_text(record.get("tlsCert")),
        key=_text(record.get("tlsKey")),
        api_key_env=str(record.get("apiKeyEnv") or "TEMPORAL_API_KEY"),
    )
    return server, str(record.get("workflowId") or "")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


async def query_fleet(server: Server, wid: str) -> dict[str, Any]:
    """The run as its workflow tells it (fleet.json's shape), `alive` while it runs. A run that ended answers from
    its result, which the server keeps (no worker needed); a running one through its `fleet` query."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    client = await connect(server)
    handle = client.get_workflow_handle(wid)
    try:
        described = await handle.describe()
        if described.status == WorkflowExecutionStatus.RUNNING:
            fleet: dict[str, Any] = await handle.query("fleet")
            fleet["alive"] = True
            return fleet
        if described.status == WorkflowExecutionStatus.COMPLETED:
            fleet = await handle.result()
            fleet["alive"] = False
            return fleet
    except RPCError as error:
        said = error.message
        if "no poller" in said:
            said = "no worker takes its queue now: start `ralph worker` on a machine"
        raise RalphError(f"the workflow {wid} on {server.address}: {said}") from None
    name = described.status.name.lower() if described.status is not None else "gone"
    return {"status": "stopped", "exitMessage": f"its workflow is {name} on the server", "alive": False}


async def _start(server: Server, spec: FeatureSpec, detach: bool, record: str) -> int:
    from temporalio.common import WorkflowIDConflictPolicy

    client = await connect(server)
    wid = workflow_id(spec.remote, spec.feature)
    handle = await client.start_workflow(
        WORKFLOW,
        spec,
        id=wid,
        task_queue=spec.queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    remember(server, spec, record)  # the workflow is there: `ralph status` here asks it from now on
    print(f"Workflow {wid} on {server.address} ({server.namespace}), queue {spec.queue}.", flush=True)
    if detach:
        print("Detached: the run goes on on the workers. `ralph status` shows it; `ralph stop` stops it.", flush=True)
        return 0
    return await follow(handle)


async def follow(handle: Any) -> int:
    """The run's lines as they come, until it ends: its exit code. Ctrl+C stops following, not the run."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    said, away = 0, False
    try:
        while True:
            try:
                lines = await handle.query("lines", said)
                described = await handle.describe()
            except RPCError as error:  # the server restarting, or the network: the run goes on without us
                if not away:
                    print(f"ralph: the Temporal server does not answer ({error.message}): waiting for it", flush=True)
                away = True
                await asyncio.sleep(AWAY_RETRY_S)
                continue
            away = False
            for number, text in lines:
                print(strip_terminal_controls(str(text)), flush=True)
                said = int(number)
            if described.status is not None and described.status != WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(FOLLOW_EVERY_S)
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("Detached: the run goes on on the workers. `ralph status` shows it; `ralph stop` stops it.", flush=True)
        return 0
    try:
        result = await handle.result()
    except Exception as error:  # the workflow failed, was terminated or cancelled on the server
        print(f"ralph: the run's workflow ended without a result: {error}", file=sys.stderr)
        return 1
    try:  # the last lines: a run that ended answers from its history, while a worker is there to replay it
        for number, text in await handle.query("lines", said):
            del number
            print(strip_terminal_controls(str(text)), flush=True)
    except RPCError:
        print(f"ralph: {result.get('exitMessage') or result.get('exitReason')}", flush=True)
    reason = str(result.get("exitReason") or "")
    try:
        return ExitReason(reason).exit_code
    except ValueError:
        return 1


async def steer_run(server: Server, wid: str, asked: Steer, check: Callable[[dict[str, Any]], None]) -> None:
    """`asked` signalled to the workflow, once `check` passed on what its `fleet` query says (a refusal raises and
    nothing is sent)."""
    from temporalio.service import RPCError

    check(await query_fleet(server, wid))
    client = await connect(server)
    try:
        await client.get_workflow_handle(wid).signal("steer", asked)
    except RPCError as error:  # it ended between the check and the signal
        raise RalphError(f"the workflow {wid} on {server.address}: {error.message}; nothing was sent") from None
