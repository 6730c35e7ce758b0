"""files/store.py and files/read.py: atomic writes, appends, the run lock and its probe."""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive, read_json_object, read_lock_holder
from ralphloop.files.store import (
    SCHEMA_VERSION,
    RunLock,
    append_text,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)

# ---------------------------------------------------------------- atomic writes


def test_atomic_write_json_adds_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    atomic_write_json(path, {"status": "running", "iteration": 2, "text": "ünï"})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schema_version": SCHEMA_VERSION, "status": "running", "iteration": 2, "text": "ünï"}
    assert next(iter(data)) == "schema_version"
    assert path.read_text(encoding="utf-8").endswith("}\n")


@pytest.mark.parametrize("sync", [True, False], ids=["fsynced", "not-fsynced"])
def test_atomic_write_replaces_and_leaves_no_temp_file(tmp_path: Path, sync: bool) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    atomic_write_json(path, {"a": 1}, sync=sync)
    atomic_write_json(str(path), {"a": 2}, sync=sync)
    assert json.loads(path.read_text())["a"] == 2
    assert os.listdir(tmp_path) == ["state.json"]


def test_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old content")
    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_text() == "old content"
    assert os.listdir(tmp_path) == ["state.json"]


def test_atomic_write_keeps_existing_permission_bits(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{}")
    path.chmod(0o600)
    atomic_write_json(path, {"a": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    atomic_write_text(path, "text")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_atomic_write_of_a_new_file_is_not_private_to_the_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    atomic_write_json(path, {})
    mask = os.umask(0o022)
    os.umask(mask)
    # a new state file gets the usual 0666 less the umask, never a private temporary file's 0600
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


def test_atomic_write_text_is_utf8(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    atomic_write_text(path, "日本 ✓")
    assert path.read_bytes() == "日本 ✓".encode()


# ---------------------------------------------------------------- append_text


def test_append_text_creates_then_appends(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    append_text(path, "one\n")
    append_text(str(path), "two ✓\n")
    assert path.read_text(encoding="utf-8") == "one\ntwo ✓\n"


def test_append_text_never_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("x" * 10_000 + "\n")
    append_text(path, "end\n")
    assert path.read_text() == "x" * 10_000 + "\nend\n"


def test_append_text_starts_a_new_line_after_a_cut_one(tmp_path: Path) -> None:
    """A crash, or an agent that appended half a line to ralph's record, never swallows ralph's next line."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"ok": 1}\n{"torn": ')
    append_text(path, '{"ok": 2}\n')
    assert path.read_bytes() == b'{"ok": 1}\n{"torn": \n{"ok": 2}\n'


def test_append_text_refuses_a_fifo_in_the_records_place_at_once(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    os.mkfifo(path)
    with pytest.raises(RalphError, match=r"events\.jsonl: not a regular file"):
        append_text(path, "line\n")


def test_append_text_refuses_a_link_in_place_of_ralphs_own_record(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("")
    (tmp_path / "ralph_metrics.jsonl").symlink_to(target)
    with pytest.raises(RalphError, match="a symbolic link"):
        append_text(tmp_path / "ralph_metrics.jsonl", "{}\n", follow=False)
    assert target.read_text() == ""


# ---------------------------------------------------------------- RunLock


def test_second_lock_on_the_same_path_is_refused_naming_the_pid(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    first = RunLock(path, "ralph run for feat")
    first.acquire()
    try:
        with pytest.raises(RalphError) as caught:
            RunLock(path, "ralph run for feat").acquire()
        message = str(caught.value)
        assert f"PID {os.getpid()}" in message
        assert "ralph run for feat is already running" in message
    finally:
        first.release()


def test_release_allows_a_new_acquire(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    first = RunLock(path, "run")
    first.acquire()
    first.release()
    second = RunLock(path, "run")
    second.acquire()
    try:
        assert read_lock_holder(path) == os.getpid()
    finally:
        second.release()


def test_lock_file_holds_the_pid_and_is_emptied_on_release(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with RunLock(path, "run"):
        assert path.read_text() == f"{os.getpid()}\n"
    assert path.read_text() == ""


def test_release_twice_is_harmless(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / ".lock", "run")
    lock.acquire()
    lock.release()
    lock.release()
    with RunLock(tmp_path / ".lock", "run"):
        pass


def test_stale_pid_in_a_free_lock_file_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    path.write_text("999999\n")
    with RunLock(path, "run"):
        assert read_lock_holder(path) == os.getpid()


# ---------------------------------------------------------------- lock_holder_alive


def test_lock_holder_alive_is_none_when_the_file_is_absent_and_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    assert lock_holder_alive(path) is None
    assert not path.exists()


def test_lock_holder_alive_is_none_when_free(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    path.write_text("12345\n")  # a PID left behind, but nobody holds the lock
    assert lock_holder_alive(path) is None


def test_lock_holder_alive_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    lock = RunLock(path, "run")
    lock.acquire()
    try:
        assert lock_holder_alive(path) == os.getpid()
        # Probing does not disturb the holder.
        assert lock_holder_alive(path) == os.getpid()
        with pytest.raises(RalphError):
            RunLock(path, "run").acquire()
    finally:
        lock.release()
    assert lock_holder_alive(path) is None


def test_lock_holder_alive_is_zero_when_held_by_an_unknown_pid(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    path.write_text("")
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert lock_holder_alive(path) == 0
        with pytest.raises(RalphError) as caught:
            RunLock(path, "run").acquire()
        assert "another process" in str(caught.value)
    finally:
        os.close(fd)
    assert lock_holder_alive(path) is None


# ---------------------------------------------------------------- readers


def test_read_json_object(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    assert read_json_object(path) is None
    path.write_text("[1, 2]")
    assert read_json_object(path) is None
    path.write_text("{broken")
    assert read_json_object(path) is None
    path.write_bytes(b"\xff\xfe")
    assert read_json_object(path) is None
    path.write_text('{"a": 1}')
    assert read_json_object(path) == {"a": 1}
    assert read_json_object(tmp_path / "x.json" / "child") is None


def test_read_lock_holder(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    assert read_lock_holder(path) is None
    path.write_text("")
    assert read_lock_holder(path) is None
    path.write_text("abc\n")
    assert read_lock_holder(path) is None
    path.write_text(" 4242\n")
    assert read_lock_holder(path) == 4242
