"""Every agent backend's output parser over 10 MB of its CLI's own output (target: under 1 s each; these captures
are small events, a few hundred bytes a line, so the cost is per line: claude_stream.py's 10 MB of large tool
results parse in under 200 ms), and what failover costs an iteration (choosing the agent: one read of the shared
book of limits; target: under 1 ms).

1. For each backend of the catalog with a parser, the lines of a real captured run of its CLI
   (tests/fixtures/NAME/..., the same the tests replay) repeated to 10 MiB, then the capture's own last line, fed
   in 64 KiB chunks as the loop does, then finish(): median and range of 5 runs. The result is checked to end
   with the capture's final text, so the bench measures a parser that read everything.
2. FailoverAgent's choice of the next agent (claude, codex) with a book of 256 marks: median of 2,000 choices.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ralphloop.agents.agent_limits import LIMITS_FILE, LimitBook, Limited
from ralphloop.agents.registry import make_agent
from ralphloop.config.settings import load_settings
from ralphloop.core.clock import FakeClock
from ralphloop.core.protocols import ProcessOutcome
from ralphloop.plugins.agents import CATALOG
from ralphloop.plugins.entry_points import load
from ralphloop.project.paths import FeaturePaths

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
CAPTURES = {
    "claude": "claude/runs/claude_mock_tool_streamjson",
    "codex": "codex/mock_tool_json",
    "gemini": "gemini/e2e_tool_write",
    "copilot": "copilot/mock_ok_json",
    "opencode": "opencode/mock_tool_all_json",
    "aider": "aider/mock_ok",
    "amp": "amp/built_tool_complete",
    "cursor": "cursor/built_tool_complete",
}
SIZE = 10 * 1024 * 1024
CHUNK = 64 * 1024
RUNS = 5
DONE = ProcessOutcome(exit_code=0, duration_s=1.0)


def parse_once(name: str, data: bytes) -> tuple[float, str]:
    parser = load(CATALOG[name].log_parser)()
    started = time.perf_counter()
    for at in range(0, len(data), CHUNK):
        parser.feed(data[at : at + CHUNK])
    result = parser.finish(DONE)
    return time.perf_counter() - started, result.final_text


def parsers() -> None:
    print(f"1. each parser over {SIZE // (1024 * 1024)} MiB of its CLI's output, {RUNS} runs")
    for name, folder in CAPTURES.items():
        capture = (FIXTURES / folder / "stdout").read_bytes()
        lines = capture.splitlines(keepends=True)
        body = b"".join(lines[:-1]) or capture
        data = body * max(1, SIZE // max(1, len(body))) + lines[-1]
        _, alone = parse_once(name, capture)
        times = []
        for _ in range(RUNS):
            took, text = parse_once(name, data)
            assert text.endswith(alone[-200:]), f"{name}: the repeated output did not read as the capture does"
            times.append(took * 1000)
        print(
            f"   {name:9} {statistics.median(times):7.1f} ms  (range {min(times):.1f}-{max(times):.1f}, "
            f"{len(data) / 1e6 / (statistics.median(times) / 1000):6.0f} MB/s)"
        )


def failover() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["RALPH_HOME"] = home
        project = Path(home) / "project"
        project.mkdir()
        settings = load_settings(str(project), {"agent": ("claude,codex", "--agent")}, env={})
        clock = FakeClock(start=datetime(2026, 11, 27, tzinfo=UTC))
        book = LimitBook(os.path.join(home, LIMITS_FILE))
        for n in range(256):
            book.mark(f"other/{n}", Limited(clock.now() + timedelta(hours=1), "usage_limit", "m" * 200), clock.now())
        paths = FeaturePaths(str(project), str(project / ".ralph" / "f"))
        agent = make_agent(settings, paths, dry_run=True, clock=clock)
        times = []
        for _ in range(2000):
            started = time.perf_counter()
            agent._choose()  # type: ignore[attr-defined]
            times.append((time.perf_counter() - started) * 1e6)
        size = os.path.getsize(os.path.join(home, LIMITS_FILE))
        print(f"2. failover's choice of an agent, with a {size / 1024:.0f} KiB book of 256 marks")
        print(f"   median {statistics.median(times):.0f} µs, 99th percentile {sorted(times)[1979]:.0f} µs")


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    parsers()
    failover()
