"""Secrets out of the logs: API keys and tokens are replaced before an agent's output reaches a file.

Two nets: the values of secret-looking environment variables ralph and the agent run with (exact matches,
whatever their shape), and the shapes of well-known keys (Anthropic, OpenAI, GitHub, AWS, Slack, Google).
Output streams in arbitrary chunks, so the redactor works on whole lines and holds back the unfinished
end of a chunk until its line is complete (or, for a very long line, all but its last bytes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

MASK = b"[REDACTED]"
_KEY_SHAPES = re.compile(
    rb"sk-ant-[A-Za-z0-9_\-]{8,}"
    rb"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"
    rb"|gh[pousr]_[A-Za-z0-9]{20,}"
    rb"|github_pat_[A-Za-z0-9_]{20,}"
    rb"|AKIA[0-9A-Z]{16}"
    rb"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    rb"|AIza[0-9A-Za-z_\-]{35}"
)
# A webhook URL is a credential too: whoever has it can post (Slack's carry their token in the path).
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|WEBHOOK(?:_URL)?)(?:$|_)", re.IGNORECASE
)
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary words
# A held-back tail longer than this is written out, all but the last _OVERLAP bytes (a secret is shorter).
_HOLD_LIMIT = 64 * 1024
_OVERLAP = 512


def secret_values(environments: Iterable[Mapping[str, str]]) -> list[bytes]:
    """The values of variables whose names say they are secret (…_API_KEY, …_TOKEN, …_WEBHOOK …), longest first."""
    found = {
        value.encode("utf-8", "surrogateescape")
        for env in environments
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET
    }
    return sorted(found, key=len, reverse=True)


def redact(data: bytes, secrets: Iterable[bytes] = ()) -> bytes:
    """`data` with every known secret value and every key-shaped string replaced by MASK."""
    for secret in secrets:
        if secret in data:
            data = data.replace(secret, MASK)
    return _KEY_SHAPES.sub(MASK, data)


class StreamRedactor:
    """Redacts a byte stream fed in chunks: `feed` returns what can be written now, `flush` the rest."""

    def __init__(self, secrets: Iterable[bytes] | None = None) -> None:
        self._secrets = list(secret_values([os.environ]) if secrets is None else secrets)
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        pending = self._held + data
        end = pending.rfind(b"\n") + 1
        if end == 0 and len(pending) > _HOLD_LIMIT:
            end = len(pending) - _OVERLAP
        self._held = pending[end:]
        return redact(pending[:end], self._secrets) if end else b""

    def flush(self) -> bytes:
        rest, self._held = self._held, b""
        return redact(rest, self._secrets) if rest else b""
