"""Prints argv[1] (and echoes the prompt first with --echo-prompt); exits with --exit N."""

from __future__ import annotations

import sys

prompt = sys.stdin.read()
args = sys.argv[1:]
code = 0
if "--exit" in args:
    index = args.index("--exit")
    code = int(args[index + 1])
    del args[index : index + 2]
if "--echo-prompt" in args:
    args.remove("--echo-prompt")
    sys.stdout.write(prompt)
if args:
    print(args[0])
if code:
    print(f"failing with {code}", file=sys.stderr)
sys.exit(code)
