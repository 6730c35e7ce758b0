"""What a config file's YAML was read as, kept as JSON under ralph's home, so that a command that reads an
unchanged config.yaml reads one small JSON file instead of importing PyYAML: 20 ms of every `ralph run`'s start,
and of each story loop's in a parallel run (bench/startup.py, issue 33).

An entry is named by the SHA-256 of the file's bytes and names ralph's version: other bytes, or another version,
are a miss, read as YAML again. Only what JSON gives back exactly is kept (text keys; text, numbers, booleans,
null, lists and mappings): a YAML date or a number key is read as YAML every time. An entry that cannot be read
(a link, a FIFO, garbage, too big) is a miss. Entries are written only by `ralph run` once its run has started
(`keep`): a command that reads, or one refused for bad input, leaves every file as it was. The folder keeps the
`KEEP` newest entries. What an entry holds is checked as the YAML's reading is, and its faults named as the
file's own: whoever can write ralph's home could change the config as much by editing ~/.ralph/config.yaml.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Any

from ralphloop import __version__
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import CONFIG_CAP, read_file
from ralphloop.files.store import atomic_write_bytes

FORMAT = 1
KEEP = 32  # entries: one per version of each config file read lately
_PENDING: dict[str, tuple[str, bytes]] = {}  # entries read as YAML by this process: name → (folder, body)


def found(folder: str, raw: bytes) -> dict[str, Any] | None:
    """The mapping the bytes `raw` were read as, when an entry for exactly them is kept in `folder`."""
    digest = _digest(raw)
    try:
        stored = read_file(os.path.join(folder, digest + ".json"), cap=2 * CONFIG_CAP + 4096, follow=False)
        entry = json.loads(stored) if stored is not None else None
    except (RalphError, OSError, ValueError, RecursionError):  # refused (a FIFO, a link, too big), torn: a miss
        return None
    if not isinstance(entry, dict) or any(entry.get(key) != value for key, value in _stamp(digest).items()):
        return None
    data = entry.get("data")
    return data if isinstance(data, dict) else None


def read_as(folder: str, raw: bytes, data: dict[str, Any]) -> None:
    """Note that `raw` was read as `data`, to be kept by `keep` when JSON gives it back exactly."""
    digest = _digest(raw)
    try:
        text = json.dumps({**_stamp(digest), "data": data}, ensure_ascii=False, allow_nan=False)
        exact = json.loads(text)["data"] == data  # not when a number key became text
    except (TypeError, ValueError, RecursionError):  # a date, a set, a key of another type, NaN
        return
    if exact:
        _PENDING[digest + ".json"] = (folder, text.encode("utf-8"))


def keep() -> None:
    """Write the entries this process noted (`ralph run`, once its run has started); silently not when it cannot."""
    for name, (folder, body) in list(_PENDING.items()):
        with contextlib.suppress(OSError):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            atomic_write_bytes(os.path.join(folder, name), body, sync=False)
            _prune(folder, name)
        del _PENDING[name]


def _prune(folder: str, kept: str) -> None:
    entries = [entry for entry in os.scandir(folder) if entry.name.endswith(".json") and entry.is_file()]
    if len(entries) <= KEEP:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
    for entry in entries[: len(entries) - KEEP]:
        if entry.name != kept:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()  # an entry's name, with ".json"


def _stamp(digest: str) -> dict[str, Any]:
    return {"format": FORMAT, "ralph": __version__, "sha256": digest}
