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
    sys.exit(code)
