"""`ralph worker --temporal HOST:PORT [--namespace NS] [--queue NAME] [--slots N] [--workdir DIR]` (issue 37)."""

from __future__ import annotations

import argparse

from ralphloop.cli.temporal_flags import queue_of, server_of
from ralphloop.cli.worker_flags import slots_of, workdir_of


def command(args: argparse.Namespace, argv: list[str]) -> int:
    del argv
    server = server_of(args, None)
    slots, workdir, queue = slots_of(args.slots), workdir_of(args.workdir), queue_of(args, None)
    from ralphloop.cli.temporal_flags import needs_extra

    needs_extra()
    from ralphloop.temporal.worker import serve

    return serve(server, queue, slots, workdir)
