"""Analysing a 10 MB agent output: target under 200 ms, aim 50 ms, in process, no subprocesses.

Three paths, each the median of several runs:
- analyze() over the whole 10 MB reply (prose, code blocks, inline code, test logs, a status block);
- the loop's path for a command agent: 10 MB of stdout fed in 64 KiB chunks to the text parser
  (which keeps the last MiB), then analyzed;
- `ralph analyze`'s path for a 10 MB Claude stream-json log: every event parsed, then the result analyzed.
Then hostile replies (a 10 MB line of backticks, thousands of quoted tags, ...): the worst case.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.text import TextOutputParser
from ralphloop.analysis.signals import analyze
from ralphloop.core.protocols import AgentRequest, ProcessOutcome

SIZE = 10 * 1024 * 1024
RUNS = 5
DONE = ProcessOutcome(exit_code=0, duration_s=0.0)
REQUEST = AgentRequest("", 1, "", "", "", "")
STATUS = (
    "---RALPH_STATUS---\nSTATUS: COMPLETE\nTASKS_COMPLETED_THIS_LOOP: 1\nFILES_MODIFIED: 3\n"
    "TESTS_STATUS: PASSING\nWORK_TYPE: IMPLEMENTATION\nEXIT_SIGNAL: true\nRECOMMENDATION: done\n"
    "---END_RALPH_STATUS---\n"
)


def reply(size: int) -> str:
    """A plausible long reply: explanations, a code block and a test log every couple of KB."""
    unit = (
        "I read `src/textkit/slug.py` and the failing test, then changed the `slugify` helper so that "
        "it keeps digits. The acceptance criteria ask for lowercase output, so I added a test for it.\n\n"
        "```python\ndef slugify(text: str) -> str:\n"
        "    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n```\n\n"
        "Running the tests:\n\n"
        + "tests/test_slug.py::test_digits PASSED\n" * 20
        + "\n"
        + "All checks pass for this change; the next story is STORY-002.\n" * 8
    )
    body = unit * (size // len(unit))
    return body + STATUS + "<promise>COMPLETE</promise>\n"


def stream_json(size: int) -> bytes:
    text = "Working on it: " + "x" * 900
    event = json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
    lines = (event + "\n") * (size // (len(event) + 1))
    result = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": STATUS})
    return (lines + result + "\n").encode()


def median_ms(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def text_agent_path(data: bytes) -> bool:
    parser = TextOutputParser(REQUEST)
    for start in range(0, len(data), 64 * 1024):
        parser.feed(data[start : start + 64 * 1024])
    return analyze(parser.finish(DONE).final_text).completion_claimed


def stream_json_path(data: bytes) -> bool:
    parser = StreamJsonParser()
    for start in range(0, len(data), 1024 * 1024):
        parser.feed(data[start : start + 1024 * 1024])
    return analyze(parser.finish(DONE).final_text).completion_claimed


def main() -> None:
    text = reply(SIZE)
    data = text.encode()
    events = stream_json(SIZE)
    assert analyze(text).completion_claimed and text_agent_path(data) and stream_json_path(events)
    print(f"Analysing a {len(data) / 1e6:.1f} MB agent output (median of {RUNS}; target < 200 ms, aim 50 ms):")
    print(f"  analyze() over the whole reply:                 {median_ms(lambda: analyze(text)):6.1f} ms")
    print(f"  command agent: stdout parser + analyze:         {median_ms(lambda: text_agent_path(data)):6.1f} ms")
    print(f"  Claude stream-json log: every event + analyze:  {median_ms(lambda: stream_json_path(events)):6.1f} ms")
    hostile = {
        "a 10 MB line of backticks": "`" * SIZE,
        "a 10 MB line of dashes": "-" * SIZE,
        "ten thousand fences": "```\n" * (SIZE // 4),
        "quoted promises only": "`<promise>COMPLETE</promise>` " * (SIZE // 30),
        "opening <ralph> tags only": "<ralph>" * (SIZE // 7),
        "DONE tags only": "<ralph>DONE 1</ralph>" * (SIZE // 21),
        "status markers only": "---RALPH_STATUS---\n" * (SIZE // 19),
        "newlines only": "\n" * SIZE,
    }
    print("Hostile 10 MB replies (analyze(), median):")
    for name, body in hostile.items():
        print(f"  {name:28} {median_ms(lambda body=body: analyze(body)):6.1f} ms")


if __name__ == "__main__":
    main()
