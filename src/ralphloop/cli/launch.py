"""The `ralph` command's first code (`python -m ralphloop` and the installed script): a Ctrl+C while ralph is
still importing itself ends it as any other Ctrl+C does, with one line and exit 130, never a traceback."""

from __future__ import annotations

import sys


def entry() -> None:
    try:
        from ralphloop.cli.main import main

        code = main()
    except KeyboardInterrupt:
        print("ralph: interrupted", file=sys.stderr)
        code = 130
    if "temporalio" in sys.modules:
        _out_at_once(code)
    sys.exit(code)


def _out_at_once(code: int) -> None:
    """A command that used a Temporal client ends here, its output flushed: the SDK's native runtime, torn down by
    the interpreter's finalization, crashed the process at exit now and then (SIGSEGV after a run's last line, seen
    in CI), which turned a finished run's exit code into -11."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            continue
    os._exit(code)
