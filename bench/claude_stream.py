"""Claude Code stream-json: parsing a 10 MB transcript (target under 200 ms), and ralph's own memory
while `ralph run` streams a 200 MB agent output (target under 100 MB RSS).

1. A realistic 10 MB transcript built in memory (system init, a rate_limit_event, assistant events with
   thinking, text and tool_use blocks, user events with tool results from a few hundred bytes to 300 KB,
   some of them errors, api_retry events, then one result event with usage, modelUsage and cost) fed to
   StreamJsonParser in 64 KiB chunks, as the loop does, then finish(): median and range of 7 runs.
   The parsed result is checked (session, cost, turns, model, text, tool errors, tokens).
2. The real `ralph run -n 1 --no-archive` in a throwaway git project whose Claude backend
   (`claude.command`) is a stand-in written by this script: it reads the prompt, writes ~200 MB of
   valid stream-json in large writes (single lines of 3 to 13 MB among them, and one of over 20 MiB,
   past the parser's 16 MiB line limit, which it skips), then a result event, and exits 0. ralph's own
   process is sampled from /proc every 20 ms (VmHWM, VmRSS); the same run with a tiny output is the
   baseline. The iteration log is bounded by `process.log_max_mb: 64`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from _project import make_project
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.json_lines import MAX_LINE_BYTES
from ralphloop.core.protocols import AgentResult, ProcessOutcome

MB = 1_000_000
MIB = 1024 * 1024
CHUNK = 64 * 1024  # what the loop reads from the agent's stdout at a time (process._CHUNK)
RUNS = 7
PARSE_SIZE = 10 * MIB
STREAM_SIZE = 200 * MIB
# Single lines in the 200 MB stream: parsed (several MB each), and one over the parser's limit (skipped).
BIG_LINES = (3 * MIB, 5 * MIB, 8 * MIB, 12 * MIB)
SKIPPED_LINE = 20 * MIB
SAMPLE_S = 0.02

SESSION = "5f3c2a9e-7d41-4b8e-9c0a-2e6f1d8b4a17"
MODEL = "claude-sonnet-4-5-20250929"
COST = 4.2719355
FINAL_TEXT = (
    "Implemented S-1: the parser keeps digits and the new tests pass.\n\n"
    "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nTASKS_COMPLETED_THIS_LOOP: 0\nFILES_MODIFIED: 3\n"
    "TESTS_STATUS: PASSING\nWORK_TYPE: IMPLEMENTATION\nEXIT_SIGNAL: false\nRECOMMENDATION: review\n"
    "---END_RALPH_STATUS---"
)
WORDS = ("parser", "slug", "token", "story", "result", "value", "index", "cache", "config", "report", "session")
WORDS += ("event", "stream", "buffer", "limit", "retry", "commit", "branch", "feature", "status", "usage", "window")

# ---------------------------------------------------------------- a realistic transcript


def corpus(size: int = MIB, seed: int = 7) -> str:
    """Tool output: code, test logs and prose, with quotes, backslashes, tabs and non-ASCII to escape."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size:
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        pick = rng.randrange(6)
        if pick == 0:
            indent = "    " * rng.randrange(3)
            line = f"{indent}def {a}_{b}({c}: str, limit: int = {rng.randrange(999)}) -> dict[str, int]:"
        elif pick == 1:
            line = f'        return {{"{a}": {rng.randrange(10**6)}, "path": "src\\\\{b}\\\\{c}.py", "ok": True}}'
        elif pick == 2:
            line = f"tests/test_{a}.py::test_{b}_{c} PASSED{' ' * rng.randrange(20)}[{rng.randrange(100):3d}%]"
        elif pick == 3:
            line = f"\t{a} → {b}: café ✓ «{c}» {rng.random():.6f}"
        elif pick == 4:
            line = f"src/{a}/{b}.py:{rng.randrange(900)}:{rng.randrange(80)}: E501 line too long ({c})"
        else:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 16))) + "."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def dumps(event: dict[str, object]) -> bytes:
    """One event line, as Claude Code writes it (compact JSON, UTF-8)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _uuid(rng: random.Random) -> str:
    hex_ = f"{rng.getrandbits(128):032x}"
    return f"{hex_[:8]}-{hex_[8:12]}-{hex_[12:16]}-{hex_[16:20]}-{hex_[20:]}"


def _usage(rng: random.Random) -> dict[str, object]:
    return {
        "input_tokens": rng.randrange(1, 50),
        "cache_creation_input_tokens": rng.randrange(5000),
        "cache_read_input_tokens": rng.randrange(20000, 150000),
        "output_tokens": rng.randrange(1, 900),
        "service_tier": "standard",
    }


USAGE = {
    "input_tokens": 1834,
    "cache_creation_input_tokens": 181234,
    "cache_read_input_tokens": 9876543,
    "output_tokens": 61234,
}


class Transcript:
    """Builds stream-json lines and counts what the parser should find in them."""

    def __init__(self, seed: int = 2026) -> None:
        self.rng = random.Random(seed)
        self.text = corpus()
        self.turns = 0
        self.tool_errors = 0
        self.retries = 0

    def head(self) -> list[bytes]:
        init = {
            "type": "system",
            "subtype": "init",
            "cwd": "/home/dev/project",
            "session_id": SESSION,
            "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "TodoWrite"],
            "mcp_servers": [],
            "model": MODEL,
            "permissionMode": "default",
            "slash_commands": ["compact", "context", "cost", "init", "review"],
            "apiKeySource": "none",
            "claude_code_version": "2.1.329",
            "output_style": "default",
            "uuid": _uuid(self.rng),
        }
        limit = {
            "type": "rate_limit_event",
            "rate_limit_info": {
                "status": "allowed_warning",
                "resetsAt": 1795226420,
                "rateLimitType": "five_hour",
                "utilization": 0.82,
                "isUsingOverage": False,
            },
            "uuid": _uuid(self.rng),
            "session_id": SESSION,
        }
        return [dumps(init), dumps(limit)]

    def _assistant(self, block: dict[str, object], message_id: str) -> bytes:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _usage(self.rng),
            "context_management": None,
        }
        event = {"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": SESSION}
        return dumps(event | {"uuid": _uuid(self.rng)})

    def _slice(self, size: int) -> str:
        if size >= len(self.text):
            return (self.text * (size // len(self.text) + 1))[:size]
        start = self.rng.randrange(len(self.text) - size)
        return self.text[start : start + size]

    def _result_size(self) -> int:
        roll = self.rng.random()
        if roll < 0.05:
            return self.rng.randrange(100_000, 300_000)
        if roll < 0.30:
            return self.rng.randrange(4_000, 40_000)
        return self.rng.randrange(150, 4_000)

    def turn(self, result_size: int | None = None) -> list[bytes]:
        """One model turn: maybe thinking, some text, a tool call; then the tool's result.

        With `result_size`, the tool is Read, so that the result is one line of about that size.
        """
        rng = self.rng
        self.turns += 1
        message_id = f"msg_{rng.getrandbits(96):024x}"
        tool_id = f"toolu_{rng.getrandbits(96):024x}"
        lines = []
        if rng.random() < 0.3:
            thinking = {"type": "thinking", "thinking": self._slice(rng.randrange(200, 3000))}
            lines.append(self._assistant(thinking | {"signature": f"{rng.getrandbits(512):0128x}"}, message_id))
        lines.append(self._assistant({"type": "text", "text": self._slice(rng.randrange(40, 800))}, message_id))
        path = f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
        tools = (
            ("Read", {"file_path": f"/home/dev/project/{path}"}),
            ("Bash", {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py", "description": "Run tests"}),
            ("Grep", {"pattern": rng.choice(WORDS), "path": "src", "output_mode": "content"}),
            ("Edit", {"file_path": path, "old_string": self._slice(300), "new_string": self._slice(320)}),
            ("Write", {"file_path": path, "content": self._slice(rng.randrange(500, 6000))}),
        )
        tool, given = tools[0] if result_size is not None else rng.choice(tools)
        block = {"type": "tool_use", "id": tool_id, "name": tool, "input": given}
        lines.append(self._assistant(block, message_id))
        output = self._slice(result_size if result_size is not None else self._result_size())
        is_error = rng.random() < 0.05
        self.tool_errors += is_error
        content: object = [{"type": "text", "text": output}] if rng.random() < 0.2 else output
        user = {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}],
            },
            "parent_tool_use_id": None,
            "session_id": SESSION,
            "uuid": _uuid(rng),
            "timestamp": "2026-11-20T23:00:42.921Z",
        }
        if tool == "Bash":  # Claude Code repeats a command's output in tool_use_result
            user["tool_use_result"] = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        lines.append(dumps(user))
        if self.turns % 97 == 0:
            self.retries += 1
            retry = {
                "type": "system",
                "subtype": "api_retry",
                "attempt": 1,
                "max_retries": 10,
                "retry_delay_ms": 593,
                "error_status": 529,
                "error": "overloaded",
                "session_id": SESSION,
                "uuid": _uuid(rng),
            }
            lines.append(dumps(retry))
        return lines

    def body(self, size: int) -> list[bytes]:
        lines: list[bytes] = []
        total = 0
        while total < size:
            for line in self.turn():
                lines.append(line)
                total += len(line)
        return lines

    def tail(self) -> list[bytes]:
        self.turns += 1
        message_id = f"msg_{self.rng.getrandbits(96):024x}"
        last = self._assistant({"type": "text", "text": FINAL_TEXT}, message_id)
        result = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 1843211,
            "duration_api_ms": 1602344,
            "num_turns": self.turns,
            "result": FINAL_TEXT,
            "stop_reason": "end_turn",
            "session_id": SESSION,
            "total_cost_usd": COST,
            "usage": USAGE | {"server_tool_use": {"web_search_requests": 0}, "service_tier": "standard"},
            "modelUsage": {
                MODEL: {
                    "inputTokens": USAGE["input_tokens"],
                    "outputTokens": USAGE["output_tokens"],
                    "cacheReadInputTokens": USAGE["cache_read_input_tokens"],
                    "cacheCreationInputTokens": USAGE["cache_creation_input_tokens"],
                    "webSearchRequests": 0,
                    "costUSD": COST - 0.0123,
                    "contextWindow": 200000,
                },
                "claude-haiku-4-5-20251001": {"inputTokens": 5123, "outputTokens": 311, "costUSD": 0.0123},
            },
            "permission_denials": [],
            "uuid": _uuid(self.rng),
        }
        return [last, dumps(result)]


# ---------------------------------------------------------------- 1. parsing 10 MB

STARTED = datetime.now(UTC)


def parse(chunks: list[bytes], total: int) -> AgentResult:
    """The loop's path: each chunk to the parser, then activity() for the live view; finish() at exit."""
    parser = StreamJsonParser(STARTED)
    for chunk in chunks:
        parser.feed(chunk)
        parser.activity()
    return parser.finish(ProcessOutcome(exit_code=0, duration_s=1.0, stdout_bytes=total))


def check(result: AgentResult, built: Transcript) -> None:
    expected = {
        "session_id": SESSION,
        "cost_usd": COST,
        "num_turns": built.turns,
        "model": MODEL,
        "final_text": FINAL_TEXT,
        "failed": False,
        "tool_errors": min(built.tool_errors, 20),
        "input_tokens": USAGE["input_tokens"],
        "cache_read_tokens": USAGE["cache_read_input_tokens"],
        "limit_warning": True,
    }
    got = {
        "session_id": result.session_id,
        "cost_usd": result.cost_usd,
        "num_turns": result.num_turns,
        "model": result.model,
        "final_text": result.final_text,
        "failed": result.failed,
        "tool_errors": len(result.tool_errors),
        "input_tokens": result.usage.input_tokens if result.usage else None,
        "cache_read_tokens": result.usage.cache_read_tokens if result.usage else None,
        "limit_warning": result.limit_warning is not None,
    }
    wrong = {key: (got[key], value) for key, value in expected.items() if got[key] != value}
    if wrong:
        sys.exit(f"bench: the parser read the transcript wrong (got, expected): {wrong}")


def bench_parse() -> None:
    built = Transcript()
    lines = built.head() + built.body(PARSE_SIZE) + built.tail()
    data = b"".join(lines)
    chunks = [data[start : start + CHUNK] for start in range(0, len(data), CHUNK)]
    check(parse(chunks, len(data)), built)
    big = sum(1 for line in lines if len(line) >= 100_000)
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        parse(chunks, len(data))
        times.append((time.perf_counter() - started) * 1000)
    floor = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for line in lines:
            json.loads(line)
        floor.append((time.perf_counter() - started) * 1000)
    median = statistics.median(times)
    print(
        f"Parsing a {len(data) / MB:.1f} MB Claude stream-json transcript ({len(lines)} events, {built.turns} turns, "
        f"{big} lines of 100 KB+, {built.retries} api_retry) in {len(chunks)} chunks of 64 KiB, {RUNS} runs:"
    )
    print(
        f"  StreamJsonParser feed + finish: median {median:.1f} ms, range {min(times):.1f}-{max(times):.1f} ms, "
        f"{len(data) / MB / (median / 1000):.0f} MB/s (target: < 200 ms)"
    )
    print(f"  json.loads of every line alone (the floor): median {statistics.median(floor):.1f} ms")
    print("  checked: session id, cost, num_turns, model, final text, tool errors, tokens, limit warning")


# ---------------------------------------------------------------- 2. ralph's memory over 200 MB

STAND_IN = """#!{python}
import sys
sys.path.insert(0, {bench!r})
from claude_stream import stand_in
stand_in({size}, {facts!r})
"""


def stand_in(size: int, facts_path: str) -> None:
    """The stand-in `claude`: reads the prompt, writes `size` bytes of stream-json (or a tiny run for 0), exits 0."""
    prompt = sys.stdin.buffer.read()
    out = sys.stdout.buffer
    built = Transcript()
    head = b"".join(built.head())
    if size:
        # Everything is built first, so that the time below is the time ralph takes to read it.
        block = b"".join(built.body(8 * MIB))
        big = [b"".join(built.turn(length)) for length in (*BIG_LINES, SKIPPED_LINE)]
        after = {2 + 3 * n: line for n, line in enumerate(big)}  # the blocks the big lines follow
        rounds = max(max(after) + 1, (size - sum(len(line) for line in big)) // len(block))
        middle = [block, *big]
        body = [part for number in range(rounds) for part in (block, after.get(number, b""))]
    else:
        middle = body = [b"".join(built.turn())]
    tail = b"".join(built.tail())
    parts = [head, *body, tail]
    lengths = [max(len(line) for line in part.split(b"\n")) for part in (head, *middle, tail)]
    started = time.monotonic()
    for part in parts:
        out.write(part)
    out.flush()
    written = sum(len(part) for part in parts)
    facts = {"bytes": written, "seconds": time.monotonic() - started, "prompt": len(prompt), "turns": built.turns}
    big_lines = sorted(length for length in lengths if length > MIB)
    with open(facts_path, "w", encoding="utf-8") as handle:
        json.dump(facts | {"big_lines": big_lines}, handle)


@dataclass
class Run:
    peak: int  # VmHWM at the last sample before exit, bytes
    rss_max: int  # the largest VmRSS sampled
    peak_at: float  # seconds after the start when VmHWM last grew
    samples: int
    wall_s: float
    exit_code: int
    agent: dict[str, Any]  # what the stand-in wrote (stand_in's facts)
    log_bytes: int


def _vm(pid: int) -> tuple[int, int] | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            text = handle.read()
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        if line.startswith(("VmHWM:", "VmRSS:")):
            key, value = line.split(":", 1)
            found[key] = int(value.split()[0]) * 1024
    if len(found) < 2:
        return None  # a zombie has no memory left to report
    return found["VmHWM"], found["VmRSS"]


def run_ralph(size: int) -> Run:
    root, env = make_project(stories=1)
    base = os.path.dirname(root)
    agent = os.path.join(base, "claude")
    facts = os.path.join(base, "agent.json")
    bench = os.path.dirname(os.path.abspath(__file__))
    with open(agent, "w", encoding="utf-8") as handle:
        handle.write(STAND_IN.format(python=sys.executable, bench=bench, size=size, facts=facts))
    os.chmod(agent, 0o755)
    with open(os.path.join(root, ".ralph", "config.yaml"), "a", encoding="utf-8") as handle:
        handle.write(f"\nclaude:\n  command: {json.dumps(agent)}\nprocess:\n  log_max_mb: 64\n")
    output = os.path.join(base, "ralph.out")
    with open(output, "wb") as sink:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ralphloop", "run", "-n", "1", "--no-archive"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        peak = rss_max = samples = 0
        peak_at = 0.0
        while proc.poll() is None:
            found = _vm(proc.pid)
            if found is not None:
                hwm, rss = found
                if hwm > peak:
                    peak, peak_at = hwm, time.perf_counter() - started
                rss_max = max(rss_max, rss)
                samples += 1
            time.sleep(SAMPLE_S)
        wall = time.perf_counter() - started
    feature = os.path.join(root, ".ralph", "feat")
    try:
        with open(facts, encoding="utf-8") as handle:
            written = json.load(handle)
        with open(os.path.join(feature, "ralph_metrics.jsonl"), encoding="utf-8") as handle:
            metrics = json.loads(handle.read().splitlines()[-1])
    except (OSError, ValueError, IndexError) as exc:
        with open(output, encoding="utf-8", errors="replace") as handle:
            said = handle.read()[-3000:]
        sys.exit(f"bench: the run in {base} did not finish as expected ({exc}); ralph exited {proc.returncode}\n{said}")
    seen = {key: metrics.get(key) for key in ("session_id", "cost_usd", "num_turns")}
    if seen != {"session_id": SESSION, "cost_usd": COST, "num_turns": written["turns"]}:
        sys.exit(f"bench: ralph did not read the stand-in's result event: ralph_metrics.jsonl says {seen} ({base})")
    log_bytes = os.path.getsize(os.path.join(feature, "logs", "iteration-1.log"))
    shutil.rmtree(base)  # the log alone is 64 MiB
    return Run(peak, rss_max, peak_at, samples, wall, proc.returncode, written, log_bytes)


def bench_stream() -> None:
    print(
        f"Streaming a {STREAM_SIZE / MIB:.0f} MiB agent output through the real `ralph run -n 1 --no-archive` "
        "(Claude backend, a stand-in `claude`):"
    )
    if not os.path.exists("/proc/self/status"):
        print("  skipped: no /proc here to read ralph's memory from")
        return
    base = run_ralph(0)
    big = run_ralph(STREAM_SIZE)
    agent = big.agent
    print(
        f"  ralph's peak RSS: {big.peak / MB:.1f} MB (target: < 100 MB) [VmHWM at the last sample; largest VmRSS "
        f"sampled {big.rss_max / MB:.1f} MB; peak reached {big.peak_at:.1f} s in; {big.samples} samples, "
        f"every {SAMPLE_S * 1000:.0f} ms]"
    )
    print(
        f"  baseline, a tiny output ({base.agent['bytes'] / 1000:.1f} KB): peak {base.peak / MB:.1f} MB; "
        f"the 200 MB output adds {(big.peak - base.peak) / MB:.1f} MB"
    )
    parsed = [length for length in agent["big_lines"] if length <= MAX_LINE_BYTES]
    skipped = [length for length in agent["big_lines"] if length > MAX_LINE_BYTES]
    print(
        f"  agent output: {agent['bytes'] / MB:.1f} MB, {agent['turns']} turns; single lines of "
        f"{', '.join(f'{length / MB:.1f}' for length in parsed)} MB parsed, and of "
        f"{', '.join(f'{length / MB:.1f}' for length in skipped)} MB skipped (over {MAX_LINE_BYTES / MB:.1f} MB)"
    )
    print(
        f"  wall time: {big.wall_s:.1f} s, {agent['bytes'] / MB / big.wall_s:.0f} MB/s end to end (the stand-in's "
        f"writes, paced by ralph's reading, took {agent['seconds']:.1f} s; baseline run {base.wall_s:.1f} s)"
    )
    why = " (max_iterations, with the story still open: expected)" if big.exit_code == 1 else ""
    print(
        f"  ralph read the result event (session, cost and turns in ralph_metrics.jsonl) and exited {big.exit_code}"
        f"{why}; iteration log {big.log_bytes / MIB:.1f} MiB (bounded by process.log_max_mb: 64)"
    )


def main() -> None:
    bench_parse()
    bench_stream()


if __name__ == "__main__":
    main()
