"""Usage-limit sentences in an agent CLI's output, whichever CLI printed them.

Only a sentence gives the limit for Codex, Gemini, Claude's text and json output and older Claude versions, so
`from_text` matches each CLI's exact sentence shapes, anchored at the start of a line or right after an
"Error:"-like prefix: prose or code that merely talks about limits ("I added a usage limit reached message") never
matches. JSON lines are decoded first and only their error-carrying fields are read, so an agent's own reply text
inside a JSON event is never taken for a limit. A command agent may run any of these CLIs, so every vendor's
sentences are looked for; each vendor's shapes are in a finder (Claude's in agents/claude/limit_sentences.py).

Pure: no I/O and no clock (the caller passes `now`); no input makes `from_text` raise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, tzinfo
from typing import Any

from ralphloop.agents.claude import limit_sentences as claude
from ralphloop.core.limits import UsageLimit
from ralphloop.guards.reset_time import DURATION_TEXT, RESET_TEXT
from ralphloop.guards.usage import ANSI_ESCAPE, LimitSentence
from ralphloop.words.patterns import lazy

_SENTENCE_MAX = 500  # how far past its start a sentence (Codex's plan advice, then "try again at ...") may run
_APOS = "['’‘ʼ`]"

# Codex: "You’ve hit your usage limit. <plan advice> or try again at Nov 21st, 2026 1:04 AM." (Try again later.)
_CODEX = lazy(rf"You{_APOS}ve hit your usage limit(?: for [^\n]{{1,80}}?)?\.")
_CODEX_AGAIN = lazy(rf"[Tt]ry again (?:at\s+(?P<reset>{RESET_TEXT})|in\s+(?P<after>{DURATION_TEXT})|later)\.?")
# Gemini: "You have exhausted your daily quota on this model." (no reset time), and the Code Assist form
# "You have exhausted your capacity on this model. Your quota will reset after 19h14m47s."
_GEMINI_DAILY = lazy(r"You have exhausted your daily quota on this model\.?")
_GEMINI_CAPACITY = lazy(
    r"You have exhausted your capacity on this model\.?"
    rf"(?:\s*Your quota will reset after\s+(?P<after>{DURATION_TEXT})\.?)?"
)


def _codex(line: str) -> Iterator[LimitSentence]:
    for m in _CODEX.finditer(line):
        again = _CODEX_AGAIN.search(line, m.end(), m.end() + _SENTENCE_MAX)
        end = again.end() if again else min(len(line), m.end() + _SENTENCE_MAX)
        reset, after = (again["reset"], again["after"]) if again else (None, None)
        yield LimitSentence(m.start(), "codex", line[m.start() : end], reset, after)


def _gemini(line: str) -> Iterator[LimitSentence]:
    for m in _GEMINI_DAILY.finditer(line):
        yield LimitSentence(m.start(), "gemini", m[0], kind="daily")
    for m in _GEMINI_CAPACITY.finditer(line):
        yield LimitSentence(m.start(), "gemini", m[0], after=m["after"])


# Each vendor: the words any of its sentences contains (a cheap first filter), and its finder.
# At the same start on a line the finder listed first wins: Codex's "You've hit your usage limit." before Claude's.
_FINDERS: tuple[tuple[tuple[str, ...], Callable[[str], Iterator[LimitSentence]]], ...] = (
    (("hit your",), _codex),
    (("exhausted your",), _gemini),
    (claude.KEYWORDS, claude.find),
)
_KEYWORDS = lazy("|".join(re.escape(word) for words, _ in _FINDERS for word in words), re.IGNORECASE)
# What may stand right before a sentence on its line: nothing, a TUI bullet or a log prefix, or "...Error:".
_ANCHOR_CHARS = frozenset("⎿■●•│✕⚠❌⏺[]")
_ANCHOR_LABEL = lazy(r"(?:error|failed|failure|content|exception|warning|warn)\s*:$", re.IGNORECASE)


def from_text(text: str, now: datetime, local: tzinfo) -> UsageLimit | None:
    """The usage limit an agent CLI's output reports, or None. The last limit sentence in the text wins.

    `text` may be a whole stdout or stderr tail: plain lines, JSON lines (decoded; only their error fields are
    read: `message`, `error`, `error.message`, Claude's `result` when `is_error`), or JSON cut off mid-line.
    Reset times are resolved by `parse_reset` against `now` and `local`.
    """
    if not isinstance(text, str) or not _KEYWORDS.search(text):
        return None
    found: UsageLimit | None = None
    for line in _candidate_lines(text):
        if _KEYWORDS.search(line):
            hit = _match_line(line, now, local)
            if hit is not None:
                found = hit
    return found


def _match_line(line: str, now: datetime, local: tzinfo) -> UsageLimit | None:
    """The last anchored limit sentence on one line; at the same start, the first finder listed wins."""
    best: LimitSentence | None = None
    for _, find in _FINDERS:
        for hit in find(line):
            if (best is None or hit.start > best.start) and _anchored(line, hit.start):
                best = hit
    return None if best is None else best.limit(now, local)


def _anchored(line: str, start: int) -> bool:
    before = line[max(0, start - 80) : start].rstrip()
    if not before:
        return not line[:start].strip()
    return before[-1] in _ANCHOR_CHARS or _ANCHOR_LABEL.search(before) is not None


# ---------------------------------------------------------------------------------------------------------------
# Where sentences may sit in an output: plain lines, or the error fields of JSON events.

_DECODER = json.JSONDecoder()
_JSON_FIELD = lazy(r'"(?P<key>message|error|result)"\s*:\s*(?P<value>"(?:[^"\\\n]|\\.){0,4000}")')
_IS_ERROR = lazy(r'"is_error"\s*:\s*true')


def _candidate_lines(text: str) -> Iterator[str]:
    for raw in text.splitlines():
        line = ANSI_ESCAPE.sub("", raw)
        if not _KEYWORDS.search(line):
            continue
        brace = line.find("{")
        try:
            obj, end = _DECODER.raw_decode(line, brace) if brace >= 0 else (None, 0)
        except (ValueError, RecursionError):
            obj, end = None, 0
        if isinstance(obj, dict):
            yield line[:brace]
            for value in _event_texts(obj, depth=0):
                yield from value.splitlines()
            yield line[end:]
            continue
        yield line
        # JSON cut off (a tail that starts or ends mid-event) or pretty-printed over several lines.
        is_error = _IS_ERROR.search(line) is not None
        for field in _JSON_FIELD.finditer(line):
            if field["key"] == "result" and not is_error:
                continue
            try:
                value = json.loads(field["value"])
            except (ValueError, RecursionError):
                continue
            if isinstance(value, str):
                yield from value.splitlines()


def _event_texts(event: Mapping[str, Any], depth: int) -> list[str]:
    """The error-carrying strings of one decoded JSON event (never the agent's own reply text)."""
    texts: list[str] = []
    if depth > 2:
        return texts
    message = event.get("message")
    if isinstance(message, str):
        texts.append(message)  # codex {"type":"error","message":...}
    error = event.get("error")
    if isinstance(error, str):
        texts.append(error)
    elif isinstance(error, Mapping):
        texts.extend(_error_texts(error))
    errors = event.get("errors")
    if isinstance(errors, list):
        texts.extend(item for item in errors if isinstance(item, str))
    result = event.get("result")
    if event.get("is_error") is True and isinstance(result, str):
        texts.append(result)  # Claude result event of a failed run
    if error and isinstance(message, Mapping):
        texts.extend(content_texts(message))  # Claude synthetic assistant event carrying an error
    item = event.get("item")
    if isinstance(item, Mapping) and item.get("type") == "error" and isinstance(item.get("message"), str):
        texts.append(item["message"])  # codex item.completed of type error
    payload = event.get("payload")
    if isinstance(payload, Mapping):
        texts.extend(_event_texts(payload, depth + 1))  # codex session file (rollout) event_msg
    return texts


def _error_texts(error: Mapping[str, Any]) -> list[str]:
    texts: list[str] = []
    for holder in (error, error.get("data"), error.get("error")):
        if isinstance(holder, Mapping) and isinstance(holder.get("message"), str):
            texts.append(holder["message"])
    return texts


def content_texts(message: Mapping[str, Any]) -> list[str]:
    """The text blocks of a chat message's `content` (a string, or a list of blocks)."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [block["text"] for block in content if isinstance(block, Mapping) and isinstance(block.get("text"), str)]
