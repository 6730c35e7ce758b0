"""Secrets out of every file: API keys and tokens are replaced before an agent's words reach a log or a record.

Two nets: the values of secret-looking environment variables ralph and the agent run with (exact matches,
whatever their shape), and the shapes of well-known keys (Anthropic, OpenAI, GitHub, AWS, Slack, Google).
Output streams in arbitrary chunks, so the stream redactor releases a chunk only up to a point no secret
can straddle: it holds back the end of a word (which may be the start of a key) and any end that begins
a known secret, until what follows settles it. A cut is never inside a word unless the word is huge.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar, cast

MASK = b"[REDACTED]"
Data = TypeVar("Data")
# `sk-` also ends ordinary words ("task-", "risk-"): that shape must start a word, or follow a colour code's `m`.
_KEY_SHAPES = re.compile(
    rb"sk-ant-[A-Za-z0-9_\-]{8,}"
    rb"|sk-(?<![A-Za-ln-z0-9]sk-)(?:proj-)?[A-Za-z0-9_\-]{20,}"  # each branch starts with its literal: fast
    rb"|gh[pousr]_[A-Za-z0-9]{20,}"
    rb"|github_pat_[A-Za-z0-9_]{20,}"
    rb"|AKIA[0-9A-Z]{16}"
    rb"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    rb"|AIza[0-9A-Za-z_\-]{35}"
)
# A key is made of a word's characters: letters, digits, `_` and `-`.
_WORD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
# A webhook URL is a credential too: whoever has it can post (Slack's carry their token in the path).
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|WEBHOOK(?:_URL)?)(?:$|_)", re.IGNORECASE
)
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary words
# A word longer than this is cut anyway (a key is far shorter), keeping its last _OVERLAP bytes back.
_HOLD_LIMIT = 64 * 1024
_OVERLAP = 512


@functools.cache
def _secret_name(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def secret_values(environments: Iterable[Mapping[str, str]]) -> list[bytes]:
    """The values of variables whose names say they are secret (…_API_KEY, …_TOKEN, …_WEBHOOK …), longest first;
    each also as JSON writes it inside a string, when that differs (a value with a quote or a backslash)."""
    found: set[bytes] = set()
    for env in environments:
        for name, value in env.items():
            if _secret_name(name) and len(value.strip()) >= _MIN_SECRET:
                for form in (value, json.dumps(value, ensure_ascii=False)[1:-1]):
                    found.add(form.encode("utf-8", "surrogateescape"))  # the bytes a program prints
                    found.add(form.encode("utf-8", "surrogatepass"))  # the same in a str (redact_text)
    return sorted(found, key=len, reverse=True)


def env_secrets() -> tuple[bytes, ...]:
    """The secret values of this process's environment (ralph's: every agent and hook inherits it)."""
    # Every record file is written through this: keyed on the environment's raw items (CPython's bytes
    # mapping, ~1 µs to hash against ~20 µs to decode and scan), so a variable set later still counts.
    raw = getattr(os.environ, "_data", None)
    return _secrets_of(tuple(raw.items())) if isinstance(raw, dict) else tuple(secret_values([os.environ]))


@functools.lru_cache(maxsize=4)
def _secrets_of(_snapshot: tuple[tuple[object, object], ...]) -> tuple[bytes, ...]:
    return tuple(secret_values([os.environ]))


def redact(data: bytes, secrets: Iterable[bytes] = ()) -> bytes:
    """`data` with every known secret value and every key-shaped string replaced by MASK."""
    for secret in secrets:
        if secret in data:
            data = data.replace(secret, MASK)
    return _KEY_SHAPES.sub(MASK, data)


def redact_text(text: str, secrets: Iterable[bytes] | None = None) -> str:
    """`text` redacted (with this process's secrets unless given): the net every record file is written through."""
    # surrogatepass: any str goes through unchanged, even half an emoji decoded from JSON
    masked = redact(text.encode("utf-8", "surrogatepass"), env_secrets() if secrets is None else secrets)
    return masked.decode("utf-8", "surrogatepass")


def redact_value(value: Data, secrets: Sequence[bytes] | None = None) -> Data:
    """`value` (JSON- or YAML-shaped data) with every string in it redacted, keys included."""
    return cast(Data, _redact_value(value, env_secrets() if secrets is None else secrets))


def _redact_value(value: object, secrets: Sequence[bytes]) -> object:
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {_redact_value(key, secrets): _redact_value(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, secrets) for item in value]
    return value


class StreamRedactor:
    """Redacts a byte stream fed in chunks: `feed` returns what can be written now, `flush` the rest."""

    def __init__(self, secrets: Iterable[bytes] | None = None) -> None:
        self._secrets = list(env_secrets() if secrets is None else secrets)
        self._overlap = max([_OVERLAP, *(2 * len(secret) for secret in self._secrets)])
        self._held = b""
        self._in_key = False  # the last cut was forced inside a word that ended masked: drop the rest of it

    def feed(self, data: bytes) -> bytes:
        pending = self._continued(self._held + data)
        end = self._safe_end(pending)
        forced = len(pending) - end > _HOLD_LIMIT
        if forced:
            end = self._settled(pending, len(pending) - self._overlap, words=False)
        out = redact(pending[:end], self._secrets)
        self._held = pending[end:]
        if forced:
            self._in_key = out.endswith(MASK) and _in_word(pending, end)
        return out

    def flush(self) -> bytes:
        rest, self._held = self._continued(self._held), b""
        self._in_key = False
        return redact(rest, self._secrets) if rest else b""

    def _continued(self, pending: bytes) -> bytes:
        """After a forced cut inside a masked key, the rest of that word is the key's: it goes unwritten."""
        if not self._in_key:
            return pending
        rest = pending.lstrip(_WORD)
        self._in_key = not rest
        return rest

    def _safe_end(self, data: bytes) -> int:
        """How much of `data` no secret can straddle: not the last word, nor an end that begins a secret."""
        low = max(0, len(data) - _HOLD_LIMIT - 1)  # a longer last word is cut anyway
        return self._settled(data, low + len(data[low:].rstrip(_WORD)), words=True)

    def _settled(self, data: bytes, end: int, *, words: bool) -> int:
        """`end` moved back until no known secret (whole, or begun at the end of `data`) nor word straddles it."""
        moved = True
        while moved:
            moved = False
            for secret in self._secrets:
                start = _straddling(data, secret, end)
                if start is not None and start < end:
                    end, moved = start, True
            if words and _in_word(data, end):
                start = _word_start(data, end)
                if start is not None and start < end:
                    end, moved = start, True
        return end


def _straddling(data: bytes, secret: bytes, end: int) -> int | None:
    """Where an occurrence of `secret` that spans `end` begins, or a proper prefix of it that ends `data`."""
    whole = data.find(secret, max(0, end - len(secret) + 1), end + len(secret) - 1)
    if whole != -1 and whole < end:
        return whole
    first = secret[:1]
    at = data.find(first, max(0, len(data) - len(secret) + 1))
    while at != -1:
        if secret.startswith(data[at:]):
            return at
        at = data.find(first, at + 1)
    return None


def _in_word(data: bytes, end: int) -> bool:
    return 0 < end < len(data) and data[end - 1] in _WORD and data[end] in _WORD


def _word_start(data: bytes, end: int) -> int | None:
    """The start of the word around `end`, or None when it began more than _HOLD_LIMIT bytes before."""
    low = max(0, end - _HOLD_LIMIT)
    start = low + len(data[low:end].rstrip(_WORD))
    return None if start == low and low > 0 else start
