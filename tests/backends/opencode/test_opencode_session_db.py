"""The model of an opencode session, read from a database with opencode 1.18.33's `message` table (its CREATE TABLE
and rows as the CLI wrote them); where opencode keeps the database; and what a missing or foreign file gives."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ralphloop.agents.opencode.session_db import data_dir, database_path, model_of

# opencode 1.18.33's own table, as `sqlite_master` of a database it wrote holds it.
MESSAGE_TABLE = """CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        )"""  # noqa: E501 (verbatim)
SESSION = "ses_de27afad1ffeCjH6bg0pScGnxE"
# The rows of one real run (data shortened to the fields read, as written by the CLI).
USER = {"role": "user", "agent": "build", "model": {"providerID": "fake", "modelID": "fake-coder"}}
ASSISTANT = {"parentID": "msg_1", "role": "assistant", "mode": "build", "modelID": "fake-coder", "providerID": "fake"}


def database(tmp_path: Path, rows: list[tuple[str, str, int, object]]) -> Path:
    path = tmp_path / "opencode.db"
    with sqlite3.connect(path) as db:
        db.execute(MESSAGE_TABLE)
        for ident, session, created, data in rows:
            text = data if isinstance(data, str) else json.dumps(data)
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (ident, session, created, created, text))
    return path


def test_the_last_assistant_message_names_the_model(tmp_path: Path) -> None:
    other = {**ASSISTANT, "modelID": "other-model", "providerID": "anthropic"}
    path = database(
        tmp_path,
        [
            ("msg_1", SESSION, 1, USER),
            ("msg_2", SESSION, 2, {**ASSISTANT, "modelID": "first-model"}),
            ("msg_3", SESSION, 3, ASSISTANT),
            ("msg_4", "ses_other", 4, other),
            ("msg_5", SESSION, 5, "not json"),
            ("msg_6", SESSION, 6, {"role": "assistant", "modelID": 7}),
        ],
    )
    assert model_of(path, SESSION) == "fake/fake-coder"
    assert model_of(path, "ses_other") == "anthropic/other-model"
    assert model_of(path, "ses_none") is None
    assert model_of(path, "") is None


def test_no_database_or_another_file_gives_no_model(tmp_path: Path) -> None:
    assert model_of(None, SESSION) is None
    assert model_of(tmp_path / "missing.db", SESSION) is None
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    assert model_of(garbage, SESSION) is None
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE message (x text)")
    assert model_of(other, SESSION) is None
    assert model_of(tmp_path, SESSION) is None  # a folder


def test_the_database_is_read_without_being_changed(tmp_path: Path) -> None:
    path = database(tmp_path, [("msg_3", SESSION, 3, ASSISTANT)])
    before = path.read_bytes()
    assert model_of(path, SESSION) == "fake/fake-coder"
    assert path.read_bytes() == before


def test_where_opencode_keeps_its_database() -> None:
    home = {"HOME": "/home/u"}
    assert data_dir(home) == Path("/home/u/.local/share/opencode")
    assert database_path(home) == Path("/home/u/.local/share/opencode/opencode.db")
    assert database_path({**home, "XDG_DATA_HOME": "/data"}) == Path("/data/opencode/opencode.db")
    assert database_path({**home, "OPENCODE_DB": "/elsewhere/x.db"}) == Path("/elsewhere/x.db")
    assert database_path({**home, "OPENCODE_DB": "mine.db"}) == Path("/home/u/.local/share/opencode/mine.db")
    assert database_path({**home, "OPENCODE_DB": ":memory:"}) is None
