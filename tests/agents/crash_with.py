"""Prints the file argv[1] to stderr, as a crashing CLI would, and exits 1."""

from __future__ import annotations

import sys

sys.stdin.read()
with open(sys.argv[1], encoding="utf-8") as handle:
    sys.stderr.write(handle.read())
sys.exit(1)
