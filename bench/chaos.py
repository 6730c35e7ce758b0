"""The chaos suite at large counts (issue 20): kill trials (ralph, its agent or both killed at random instants,
including ralph's record phase and its git commands; SIGINT, SIGTERM, SIGHUP, a double Ctrl+C), hostile agents,
two loops at once, and fuzzed task, config and state files. Prints the trials and the count in every failure
class, with the first examples of any class that is not 0; exits 1 when one is not.

    .venv/bin/python bench/chaos.py    # 1,000 kill trials, 1,000 fuzz cases, 120 hostile, 60 loops, 40 parallel runs
    .venv/bin/python bench/chaos.py --kill 50 --fuzz 100  # a quick look
    .venv/bin/python bench/chaos.py --json out.json       # the counts as JSON too

The trials are tests/chaos/ (tests/chaos/test_chaos.py runs them at small counts in CI). A trial that finds
something is removed like the others unless CHAOS_KEEP=1 is set (its folder is then kept under --workdir).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/ is the suite's home

from tests.chaos.suite import run_suite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kill", type=int, default=1000, help="kill and signal trials")
    parser.add_argument("--fuzz", type=int, default=1000, help="fuzzed file cases")
    parser.add_argument("--hostile", type=int, default=120, help="hostile-agent trials")
    parser.add_argument("--loops", type=int, default=60, help="two-loops-at-once trials")
    parser.add_argument("--fleet", type=int, default=40, help="parallel runs killed at random instants")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=None, help="where trials run (default: the temp folder)")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts here")
    args = parser.parse_args()
    counts = {"kill": args.kill, "fuzz": args.fuzz, "hostile": args.hostile, "loops": args.loops, "fleet": args.fleet}
    started = time.monotonic()
    findings = run_suite(counts, seed=args.seed, jobs=args.jobs, workdir=args.workdir)
    seconds = time.monotonic() - started
    print(findings.table())
    print(f"\n{sum(findings.trials.values())} trials in {seconds / 60:.1f} min ({args.jobs} workers, seed {args.seed})")
    if args.json:
        args.json.write_text(json.dumps({**findings.to_json(), "seconds": round(seconds, 1)}, indent=2) + "\n")
    return 1 if findings.failures else 0


if __name__ == "__main__":
    sys.exit(main())
