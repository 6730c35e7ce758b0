"""Hits a usage limit once, then works: the first run (while MARKER does not exist) creates MARKER, prints
TEXT and exits 1; every later run is story_agent.py with the remaining arguments.

Usage: limit_once.py MARKER TEXT [story_agent options...]
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    marker, text, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write("limited\n")
        sys.stdin.read()
        print(text)
        sys.exit(1)
    sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "story_agent.py"), *rest]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
