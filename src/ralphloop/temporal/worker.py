"""`ralph worker`: this machine's share of the loops (issue 37). It polls two task queues of the server: QUEUE for
story loops (up to --slots at once) and the workflows themselves, and QUEUE.merge for merges and reads of the
feature (one at a time: they are short, and never wait behind the loops). SIGINT or SIGTERM stops it: its running
loops are stopped as on Ctrl+C, their work pushed, and Temporal hands their stories to another worker."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from temporalio.worker import Worker

from ralphloop.temporal.activities import Work
from ralphloop.temporal.server import Server, connect
from ralphloop.temporal.shapes import MERGES
from ralphloop.temporal.workflow import FeatureRun

GRACE_S = 45.0  # a loop's own grace to record its iteration (15 s), and its pushes


def serve(server: Server, queue: str, slots: int, workdir: str) -> int:
    os.makedirs(workdir, exist_ok=True)
    return asyncio.run(_serve(server, queue, slots, workdir))


async def _serve(server: Server, queue: str, slots: int, workdir: str) -> int:
    work = Work(workdir, slots)
    client = await connect(server, identity=work.name)
    os.environ.pop(server.api_key_env, None)  # the client holds it now: no loop, agent, hook or gate inherits it
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    work.attach(client, loop)
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    with ThreadPoolExecutor(max_workers=slots + 2, thread_name_prefix="ralph-work") as pool:
        loops = Worker(
            client,
            task_queue=queue,
            workflows=[FeatureRun],
            activities=[work.loop],
            activity_executor=pool,
            max_concurrent_activities=slots,
            identity=work.name,
            # stopped, the worker lets its loops end as on Ctrl+C and push their work before it cancels them
            graceful_shutdown_timeout=timedelta(seconds=GRACE_S),
        )
        merges = Worker(
            client,
            task_queue=queue + MERGES,
            activities=[work.prepare, work.merge],
            activity_executor=pool,
            max_concurrent_activities=1,
            identity=work.name,
            graceful_shutdown_timeout=timedelta(seconds=GRACE_S),
        )
        print(
            f"ralph worker {work.name}: {slots} loop slot{'s' if slots != 1 else ''} on queue {queue} of "
            f"{server.address} ({server.namespace}), clones in {workdir}",
            flush=True,
        )
        try:
            async with loops, merges:
                await stop.wait()
                print("ralph worker: stopping (the running loops end as on Ctrl+C; their stories move on)", flush=True)
        finally:
            work.launcher.close()  # the warm processes not taken
    sys.stdout.flush()
    return 0
