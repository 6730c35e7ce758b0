"""The model an opencode session used, from opencode's own database: its `run --format json` events name none.

opencode 1.18.33 keeps its sessions in SQLite at `$OPENCODE_DB` (absolute, or under the data folder), else
`<data>/opencode.db` (the npm `latest` channel's name), where `<data>` is `$XDG_DATA_HOME/opencode` or
`~/.local/share/opencode`. Each row of its `message` table holds a message as JSON; an assistant message names
`providerID` and `modelID`, which ralph reports as `provider/model` (the form `--model` takes). The database is
opened read-only, after opencode has exited; anything unexpected (no file, another schema, a lock) gives no model.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

FILE_NAME = "opencode.db"
_LOOK_AT = 20  # the newest messages of the session read (the last assistant message is among them)


def data_dir(env: Mapping[str, str]) -> Path:
    """opencode's data folder (its database, its credentials `auth.json`, its logs)."""
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return Path(base) / "opencode"


def database_path(env: Mapping[str, str]) -> Path | None:
    """Where opencode keeps its sessions under `env`; None when it keeps them in memory."""
    chosen = env.get("OPENCODE_DB", "")
    if chosen == ":memory:":
        return None
    if chosen:
        return Path(chosen) if os.path.isabs(chosen) else data_dir(env) / chosen
    return data_dir(env) / FILE_NAME


def model_of(database: Path | None, session_id: str) -> str | None:
    """`provider/model` of the session's last assistant message, or None when it cannot be read."""
    if database is None or not session_id or not database.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, timeout=1.0)) as db:
            rows = db.execute(
                "SELECT data FROM message WHERE session_id = ? ORDER BY time_created DESC LIMIT ?",
                (session_id, _LOOK_AT),
            ).fetchall()
    except (sqlite3.Error, ValueError, OSError):
        return None
    for (data,) in rows:
        model = _model(data)
        if model is not None:
            return model
    return None


def _model(data: object) -> str | None:
    try:
        message = json.loads(data) if isinstance(data, str | bytes) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    provider, model = message.get("providerID"), message.get("modelID")
    if isinstance(provider, str) and isinstance(model, str) and provider and model:
        return f"{provider}/{model}"[:200]
    return None
