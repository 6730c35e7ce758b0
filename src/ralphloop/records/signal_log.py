"""signals.jsonl: what agents said through `ralph signal`, one JSON object a line, append-only.

The robust channel: the agent runs a command, and nothing it writes in prose is parsed.
The loop notes the file's size before each agent starts and reads only what was appended
after it, so a record can never count for two iterations.
"""

from __future__ import annotations

import json
import os

from msgspec import Struct

from ralphloop.analysis.signals import SignalRecord
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import read_tail
from ralphloop.files.store import SCHEMA_VERSION, append_text
from ralphloop.words.redact import redact_text
from ralphloop.words.textsafe import strip_terminal_controls

KINDS = ("complete", "blocked", "fail", "done", "learn")
MAX_TEXT = 2000
MAX_READ = 1024 * 1024  # an iteration's records; more than this is not read


class NewRecords(Struct, frozen=True):
    records: tuple[SignalRecord, ...]
    problems: tuple[str, ...]


def clean(text: str) -> str:
    """One line of plain text: secrets masked, no escapes or controls, whitespace collapsed, bounded (the cut
    comes after the masking, so that it never leaves part of a secret)."""
    return " ".join(redact_text(strip_terminal_controls(text)).split())[:MAX_TEXT]


def append_signal(path: str, record: SignalRecord, at: str) -> None:
    """Append one record in a single write (O_APPEND: whole lines even with several writers)."""
    line = {
        "schema_version": SCHEMA_VERSION,
        "at": at,
        "iteration": record.iteration,
        "signal": record.kind,
        "id": record.id or None,
        "text": record.text or None,
    }
    append_text(path, redact_text(json.dumps(line, ensure_ascii=False)) + "\n")


def size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def read_new(path: str, offset: int, iteration: int) -> NewRecords:
    """Records appended since `offset` that belong to `iteration` (or name none).

    A file that shrank (someone removed it) is read from its start. Malformed lines are
    reported, never fatal."""
    try:
        found = read_tail(path, "signals.jsonl", max_bytes=MAX_READ, start=offset, follow=False)
    except RalphError as exc:  # a FIFO or a folder the agent put there: nothing to read, and said so
        return NewRecords((), (str(exc),))
    if found is None:
        return NewRecords((), ())
    data = found[0]
    records: list[SignalRecord] = []
    problems: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        record = parse_line(raw)
        if record is None:
            problems.append(f"signals.jsonl: ignored a malformed line ({number} after this iteration began)")
        elif record.iteration in (None, iteration):
            records.append(record)
    return NewRecords(tuple(records), tuple(problems[:5]))


def parse_line(raw: bytes) -> SignalRecord | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("signal") not in KINDS:
        return None
    iteration = value.get("iteration")
    if not (iteration is None or (isinstance(iteration, int) and not isinstance(iteration, bool))):
        return None
    record_id = value.get("id")
    text = value.get("text")
    return SignalRecord(
        kind=value["signal"],
        iteration=iteration,
        id=clean(record_id) if isinstance(record_id, str) else "",
        text=clean(text) if isinstance(text, str) else "",
    )
