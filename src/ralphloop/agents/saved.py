"""Reading a saved agent output (a `logs/iteration-N.log`, or a capture) back into its final text.

The same parsers the loop uses read the file, so `ralph analyze` sees what the loop saw: a backend's own output
through that backend's own parser (agents/registry.py CATALOG: `log_format`, `log_parser`, and `sniff`, or
`sniff_text` for a CLI that prints plain text), other plain text through TextOutputParser (its last MiB), and a
log's `[stderr] ` lines left out, as the loop never analysed stderr.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ralphloop.agents.text import TextOutputParser
from ralphloop.core.protocols import AgentRequest, OutputParser, ProcessOutcome
from ralphloop.plugins.agents import AgentSpec, every_spec, log_formats
from ralphloop.plugins.entry_points import load

FORMATS = ("auto", "text", "claude-json", *log_formats())  # ralph's own; `readable()` adds the plugins'

STDERR_MARK = b"[stderr] "
_SNIFF_LINES = 50
MAX_LINE = 16 * 1024 * 1024
_DONE = ProcessOutcome(exit_code=0, duration_s=0.0)
_REQUEST = AgentRequest(prompt="", iteration=0, project_root="", feature_dir="", prompt_file="", task_id="")


def detect(head: bytes) -> str:
    """The format of a saved output, from its first lines."""
    events = []
    for raw in head.split(b"\n")[:_SNIFF_LINES]:
        line = raw.strip()
        if not line or line.startswith(STDERR_MARK):
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            break
        if isinstance(value, dict):
            events.append(value)
    for row in every_spec().values():
        if row.sniff and row.log_format and load(row.sniff)(events):
            return row.log_format
    kinds = {str(event.get("type", "")) for event in events}
    if kinds == {"result"} and len(events) == 1:
        return "claude-json"
    # `claude -p --output-format json` printed across lines (pretty), or a head cut inside it.
    stripped = head.lstrip()
    if not events and stripped.startswith(b"{") and b'"type":"result"' in stripped.replace(b" ", b""):
        return "claude-json"
    # A CLI that prints plain text (aider) is known by its own lines, e.g. its banner.
    text = [
        raw.decode("utf-8", "replace").rstrip("\r")
        for raw in head.split(b"\n")[:_SNIFF_LINES]
        if not raw.startswith(STDERR_MARK)
    ]
    for row in every_spec().values():
        if row.sniff_text and row.log_format and load(row.sniff_text)(text):
            return row.log_format
    return "text"


def final_text(chunks: Iterable[bytes], fmt: str) -> str:
    """The agent's final text from a saved output read in `chunks` (never held whole for text)."""
    if fmt == "claude-json":
        return _claude_json(b"".join(chunks))
    spec = readable().get(fmt)
    if spec is not None and spec.log_parser:
        return _parsed(chunks, spec.log_parser)
    text = TextOutputParser(_REQUEST)
    for line in _lines(chunks):
        if not line.startswith(STDERR_MARK):
            text.feed(line)
    return text.finish(_DONE).final_text


def _claude_json(data: bytes) -> str:
    """`claude -p --output-format json`: one result object (a log may add stderr lines around it)."""
    for line in data.split(b"\n"):
        if line.startswith(STDERR_MARK):
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get("result"), str):
            return str(value["result"])
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return ""
    result = value.get("result") if isinstance(value, dict) else None
    return result if isinstance(result, str) else ""


def readable() -> dict[str, AgentSpec]:
    """The formats a backend (ralph's own or a plugin's) writes its output in, each with its spec."""
    return {row.log_format: row for row in every_spec().values() if row.log_format}


def _parsed(chunks: Iterable[bytes], parser_class: str) -> str:
    """A backend's output read by its own parser, as the loop read it (without the log's stderr lines)."""
    parser: OutputParser = load(parser_class)()
    for line in _lines(chunks):
        if not line.startswith(STDERR_MARK):
            parser.feed(line)
    return parser.finish(_DONE).final_text


def _lines(chunks: Iterable[bytes]) -> Iterable[bytes]:
    """Whole lines (with their newline) from chunks, in one pass; a line longer than MAX_LINE
    comes out in pieces rather than being gathered whole."""
    buffer = bytearray()
    for chunk in chunks:
        buffer += chunk
        end = buffer.rfind(b"\n")
        if end >= 0:
            yield from bytes(buffer[: end + 1]).splitlines(keepends=True)
            del buffer[: end + 1]
        elif len(buffer) > MAX_LINE:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)
