"""A warm loop process (fleet/launcher.py): started ahead of need, it imports what a `ralph run` needs while
the other loops' agents work, then waits for its loop on stdin, one JSON line: the argv after `ralph`, the
worktree, the loop's environment and its terminal log. A story's loop then starts without the interpreter's
start-up and imports (about a quarter of a second of CPU each, on the path of every story). An empty stdin
(the coordinator is done with it) ends it; so does the coordinator's death (the parent-death signal)."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    from ralphloop.fleet.launcher import die_with_parent

    die_with_parent()
    _warm_up(os.environ.pop(AGENTS_ENV, ""))

    line = sys.stdin.readline()
    if not line.strip():
        os._exit(0)
    spec = json.loads(line)
    out = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    quiet = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(quiet, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.close(quiet)
    os.chdir(spec["cwd"])
    os.environ.update(spec["env"])
    sys.argv = ["ralph", *spec["argv"]]
    from ralphloop.cli.launch import entry

    entry()


AGENTS_ENV = "RALPH_WARM_AGENTS"  # the run's agents, whose backends are imported ahead too


def _warm_up(agents: str) -> None:
    """The modules a loop's run imports (those it imports only once running too: the config's YAML, the task
    format, the agent's backend and its error patterns), with the regular expressions they compile."""
    import ctypes  # noqa: F401 - the parent-death signal's
    import importlib

    import yaml  # noqa: F401

    import ralphloop.agents.command
    import ralphloop.agents.error_line
    import ralphloop.cli.main
    import ralphloop.cli.run_cmd
    import ralphloop.tasks.prd_json
    from ralphloop.plugins.agents import CATALOG

    for name in agents.split(","):
        if name in CATALOG:
            importlib.import_module(CATALOG[name].factory.partition(":")[0])
    import ralphloop.engine.loop  # noqa: F401 - the reply's analysis, whose patterns compile next
    from ralphloop.words.patterns import compile_all

    compile_all()


if __name__ == "__main__":
    main()
