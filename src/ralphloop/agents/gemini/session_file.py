"""What Gemini CLI's own session file adds to its stream: the tokens of each request, which a Pro model's price
depends on (its long-context rates apply to a request whose prompt is over 200k tokens), where the stream gives
only each model's sums.

0.61.0 records a run in `<config>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.jsonl`:
a first line with the `sessionId`, then one JSON line per message, written again (same `id`) when it changes; a
message of type "gemini" carries `model` and `tokens` {`input` (the prompt, cached included), `cached`, `output`,
`thoughts`, `tool`, `total`} of the API response it came from. The router's requests and subagents' are not in it.
Read once, after the process ended, and only the file whose first line names the run's session; a missing, odd or
huge file gives nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeGuard

from ralphloop.core.protocols import TokenUsage
from ralphloop.files.safe_read import MB, FileRefused, read_file

_CAP = 64 * MB
_SESSION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{7,99}")
_MAX_FOLDERS = 1000


def find(config: Path, session_id: str) -> Path | None:
    """The session file of `session_id` under `config` (`~/.gemini`): its name ends in the id's first 8
    characters, and its first line names the whole id."""
    if not _SESSION_ID.fullmatch(session_id):
        return None
    try:
        projects = sorted((config / "tmp").iterdir())[:_MAX_FOLDERS]
    except OSError:
        return None
    for project in projects:
        try:
            candidates = sorted((project / "chats").glob(f"session-*-{session_id[:8]}.jsonl"))
        except OSError:
            continue
        for path in candidates:
            if _first_session_id(path) == session_id:
                return path
    return None


def requests(path: Path) -> dict[str, list[TokenUsage]]:
    """Each model's requests, as ralph counts tokens (stats.py): input uncached, cache reads, output = total -
    prompt; {} when the file cannot be read."""
    try:
        data = read_file(path, str(path), cap=_CAP)
    except (FileRefused, OSError):
        return {}
    messages: dict[str, dict[str, Any]] = {}
    for raw in (data or b"").split(b"\n"):
        if b'"gemini"' not in raw:
            continue
        record = _json(raw)
        if record is not None and record.get("type") == "gemini" and isinstance(record.get("id"), str):
            messages[record["id"]] = record  # a message written again replaces its earlier line
    found: dict[str, list[TokenUsage]] = {}
    for message in messages.values():
        usage = _tokens(message.get("tokens"))
        if usage is not None and isinstance(message.get("model"), str):
            found.setdefault(message["model"], []).append(usage)
    return found


def _first_session_id(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 * 1024)
    except OSError:
        return None
    record = _json(first)
    value = record.get("sessionId") if record is not None else None
    return value if isinstance(value, str) else None


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _tokens(tokens: Any) -> TokenUsage | None:
    if not isinstance(tokens, dict):
        return None
    prompt, cached, total = (tokens.get(key) for key in ("input", "cached", "total"))
    if not (_count(prompt) and _count(cached) and _count(total)):
        return None
    cached = min(cached, prompt)
    return TokenUsage(input_tokens=prompt - cached, output_tokens=max(0, total - prompt), cache_read_tokens=cached)


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
