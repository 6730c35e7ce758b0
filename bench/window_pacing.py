"""What pacing against usage windows (issue 34) costs each agent call: the failover chain's own work around one call
of the real Claude backend, side by side for a baseline git ref and the working tree.

One call, as the loop makes it: the chain picks the agent (`command`: the shared book read), the real Claude parser
reads a captured run of Claude Code 2.1.329 that reports its account's 5-hour and weekly windows
(tests/fixtures/claude/runs/claude_mock_oauth_unified_allowed_streamjson, the 5-hour share rising call by call),
and the chain settles the result (the windows written to the book under its lock). The working tree also asks
`held` before the call, with `--max-window five_hour=90%` (never reached here), and keeps each call's share of the
window; the baseline had the book and the windows, not the caps. `claude,codex`, so the chain is a real one. The
book is a real file in a private RALPH_HOME on this machine's disk.

Reported: the median time per call over N calls (after a warm-up), each version in its own process, alternating
rounds so a busy machine slows both alike; and the same for a chain without caps in the working tree.

    .venv/bin/python bench/window_pacing.py [--calls N] [--rounds N] [--baseline REF] [--only-current]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile

from _versions import Version, arguments, versions

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(REPO, "tests", "fixtures", "claude", "runs", "claude_mock_oauth_unified_allowed_streamjson")

# Run inside each version's interpreter: only the APIs both versions have (the caps only where they exist).
PROBE = r"""
import json, os, sys, time
from datetime import UTC, datetime, timedelta
from ralphloop.agents.registry import make_agent
from ralphloop.config.settings import load_settings
from ralphloop.core.protocols import AgentRequest, ProcessOutcome
from ralphloop.core.clock import FakeClock
from ralphloop.project.paths import FeaturePaths

root, run, calls, caps = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.makedirs(os.path.join(root, "project"), exist_ok=True)
flags = {"agent": ("claude,codex", "--agent")}
if caps:
    flags["usage_windows"] = ([caps], "--max-window")
settings = load_settings(os.path.join(root, "project"), flags, env={})
paths = FeaturePaths(os.path.join(root, "project"), os.path.join(root, "project", ".ralph", "feat"))
clock = FakeClock(start=datetime(2027, 1, 1, tzinfo=UTC))
agent = make_agent(settings, paths, dry_run=True, clock=clock)
stdout = open(os.path.join(run, "stdout"), "rb").read()
request = AgentRequest(prompt="p", iteration=1, project_root="/", feature_dir="/", prompt_file="/p", task_id="S-1",
                       started_at=clock.now())
held = getattr(agent, "held", None)
times = []
for number in range(calls + 20):
    share = 0.3 + 0.5 * number / (calls + 20)
    out = stdout.replace(b'"utilization":0.3', f'"utilization":{share:.4f}'.encode())
    began = time.perf_counter()
    if held is not None:
        held(clock.now())
    agent.command(request)
    parser = agent.parser(request)
    parser.feed(out)
    result = parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0))
    took = time.perf_counter() - began
    assert result.windows, "the capture reports no window"
    if number >= 20:
        times.append(took)
    clock.advance(60)
print(json.dumps(times))
"""


def measure(version: Version, calls: int, caps: str) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="ralph-pacing-") as root:
        env = version.env({**os.environ, "RALPH_HOME": os.path.join(root, "home"), "CLAUDE_CONFIG_DIR": root})
        for key in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY"):
            env.pop(key, None)
        done = subprocess.run(
            [version.python, "-c", PROBE, root, RUN, str(calls), caps],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{version.label}: {done.stderr.strip()[-600:]}")
        times: list[float] = json.loads(done.stdout)
        return times


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found = versions(args.baseline, args.only_current, args.dev_venv)
    rows: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for version in found:
            current = version.label == "working tree"
            rows.setdefault(version.label + (" (five_hour=90%)" if current else ""), []).extend(
                measure(version, args.calls, "five_hour=90%" if current else "")
            )
            if current:
                rows.setdefault("working tree (no caps)", []).extend(measure(version, args.calls, ""))
    print(f"One agent call's own cost to the failover chain (claude,codex), {args.calls} calls x {args.rounds} rounds:")
    print(f"{'version':<40} {'median':>10} {'p90':>10}")
    for label, times in rows.items():
        ordered = sorted(times)
        p90 = ordered[int(len(ordered) * 0.9)]
        print(f"{label:<40} {statistics.median(times) * 1000:>8.3f}ms {p90 * 1000:>8.3f}ms")


if __name__ == "__main__":
    main()
