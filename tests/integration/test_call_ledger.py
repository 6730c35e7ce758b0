"""The per-account call ledger on real files, shared by real concurrent processes."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.files.store import SCHEMA_VERSION
from ralphloop.state.calls import CallLedger, ledger_path
from tests.conftest import PYTHON

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)

# A worker: says "ready", waits for "go" on stdin (so all workers race for the lock together,
# without any sleep), then calls take() `count` times with a fixed `now` and prints how many it got.
WORKER = textwrap.dedent(
    """
    import sys
    from datetime import datetime
    from ralphloop.state.calls import CallLedger

    path, now, limit, count = sys.argv[1], datetime.fromisoformat(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    ledger = CallLedger(path)
    print("ready", flush=True)
    assert sys.stdin.readline().strip() == "go"
    granted = sum(ledger.take(now, limit).granted for _ in range(count))
    print(granted, flush=True)
    """
)


def race(path: Path, now: datetime, limit: int, workers: int, count: int) -> list[int]:
    """Run `workers` processes that each try `count` takes at once; the number each was granted."""
    procs = [
        subprocess.Popen(
            [PYTHON, "-c", WORKER, str(path), now.isoformat(), str(limit), str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "ready", line + (proc.stderr.read() if proc.stderr else "")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            results.append(int(out.strip()))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def stored(path: Path) -> dict[str, object]:
    body = json.loads(path.read_text())
    assert isinstance(body, dict)
    return body


def test_concurrent_processes_share_exactly_limit_slots(tmp_path):
    path = Path(ledger_path(str(tmp_path / "home"), "team@example.com"))
    granted = race(path, T0, limit=25, workers=4, count=20)
    assert sum(granted) == 25, granted
    body = stored(path)
    assert body["schema_version"] == SCHEMA_VERSION
    assert body["starts"] == ["2026-01-01T09:00:00.000000Z"] * 25
    assert CallLedger(str(path)).peek(T0, 25).used == 25


def test_concurrent_processes_lose_no_starts(tmp_path):
    # Every take is granted: a lost update (two read-modify-writes interleaved) would drop starts.
    path = tmp_path / "calls" / "acct.json"
    granted = race(path, T0, limit=1000, workers=4, count=50)
    assert granted == [50, 50, 50, 50]
    starts = stored(path)["starts"]
    assert isinstance(starts, list)
    assert len(starts) == 200


def test_round_trip_format_and_window(tmp_path):
    home = tmp_path / "home"
    path = Path(ledger_path(str(home), "acct"))
    ledger = CallLedger(str(path))
    first = T0 + timedelta(microseconds=123456)
    assert ledger.take(first, 2).granted
    assert oct((home / "calls").stat().st_mode & 0o777) == oct(0o700)
    assert stored(path) == {
        "schema_version": SCHEMA_VERSION,
        "account": "acct",
        "starts": ["2026-01-01T09:00:00.123456Z"],
    }
    # A start given in another zone is stored in UTC.
    second = datetime(2026, 1, 1, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    assert ledger.take(second, 2).granted
    assert stored(path)["starts"] == ["2026-01-01T09:00:00.123456Z", "2026-01-01T09:30:00.000000Z"]
    slot = ledger.take(T0 + timedelta(minutes=40), 2)
    assert not slot.granted
    assert slot.next_free == first + HOUR
    # An hour after the first start it is pruned and the slot is granted.
    slot = ledger.take(first + HOUR, 2)
    assert slot.granted
    assert slot.used == 2
    assert stored(path)["starts"] == ["2026-01-01T09:30:00.000000Z", "2026-01-01T10:00:00.123456Z"]


def test_refused_take_without_pruning_does_not_write(tmp_path):
    path = tmp_path / "calls" / "acct.json"
    ledger = CallLedger(str(path))
    assert ledger.take(T0, 1).granted
    before = path.stat()
    content = path.read_bytes()
    assert not ledger.take(T0 + timedelta(minutes=5), 1).granted
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == content


def test_refused_take_that_prunes_writes(tmp_path):
    path = tmp_path / "calls" / "acct.json"
    ledger = CallLedger(str(path))
    assert ledger.take(T0, 2).granted
    assert ledger.take(T0 + timedelta(minutes=50), 2).granted
    assert ledger.take(T0 + timedelta(minutes=55), 2).granted is False
    # At 10:05 the 09:00 start is gone: granted, and the file holds the two in the window.
    assert ledger.take(T0 + timedelta(minutes=65), 2).granted
    assert not ledger.take(T0 + timedelta(minutes=66), 2).granted
    # At 11:00 only the 10:05 start is left; a refusal at limit 1 still writes the pruned list.
    slot = ledger.take(T0 + timedelta(minutes=120), 1)
    assert not slot.granted
    assert stored(path)["starts"] == ["2026-01-01T10:05:00.000000Z"]


def test_peek_reads_and_never_writes(tmp_path):
    path = tmp_path / "calls" / "acct.json"
    ledger = CallLedger(str(path))
    # Missing file: empty, and nothing is created (not even the folder or the lock).
    assert ledger.peek(T0, 3).used == 0
    assert not (tmp_path / "calls").exists()
    for minute in (0, 10, 20):
        assert ledger.take(T0 + timedelta(minutes=minute), 3).granted
    before = path.stat()
    content = path.read_bytes()
    # Long after: a take would prune everything; peek reports an empty window and leaves the file alone.
    assert ledger.peek(T0 + 3 * HOUR, 3).used == 0
    slot = ledger.peek(T0 + timedelta(minutes=30), 3)
    assert (slot.granted, slot.used, slot.next_free) == (False, 3, T0 + HOUR)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == content


CORRUPT = [
    b"",
    b"{not json",
    b"\xff\xfe garbage",
    b"[]",
    json.dumps({"schema_version": SCHEMA_VERSION + 1, "account": "a", "starts": []}).encode(),
    json.dumps({"schema_version": True, "account": "a", "starts": []}).encode(),
    json.dumps({"account": "a", "starts": []}).encode(),
    json.dumps({"schema_version": SCHEMA_VERSION, "account": "a"}).encode(),
    json.dumps({"schema_version": SCHEMA_VERSION, "starts": {"a": 1}}).encode(),
    json.dumps({"schema_version": SCHEMA_VERSION, "starts": [12]}).encode(),
    json.dumps({"schema_version": SCHEMA_VERSION, "starts": ["yesterday\nat noon" * 20]}).encode(),
    json.dumps({"schema_version": SCHEMA_VERSION, "starts": ["2026-01-01T09:00:00"]}).encode(),
]


@pytest.mark.parametrize("content", CORRUPT)
def test_a_corrupt_ledger_is_one_line_error_and_left_as_it_was(tmp_path, content):
    path = tmp_path / "calls" / "acct.json"
    path.parent.mkdir()
    path.write_bytes(content)
    ledger = CallLedger(str(path))
    for action in (ledger.take, ledger.peek):
        with pytest.raises(RalphError) as caught:
            action(T0, 5)
        message = str(caught.value)
        assert "\n" not in message
        assert str(path) in message
        assert "delete it to reset" in message
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__
        assert path.read_bytes() == content
    assert sorted(os.listdir(path.parent)) == ["acct.json", "acct.json.lock"]


def test_an_unreadable_ledger_is_a_ralph_error(tmp_path):
    path = tmp_path / "calls" / "acct.json"
    path.mkdir(parents=True)  # a folder where the file should be
    with pytest.raises(RalphError, match="call ledger"):
        CallLedger(str(path)).peek(T0, 5)
    with pytest.raises(RalphError, match="call ledger"):
        CallLedger(str(path)).take(T0, 5)


def test_a_naive_time_is_refused(tmp_path):
    ledger = CallLedger(str(tmp_path / "calls" / "acct.json"))
    with pytest.raises(ValueError, match="timezone"):
        ledger.take(datetime(2026, 1, 1), 5)


@pytest.mark.parametrize(
    ("account", "name"),
    [
        ("acct", "acct.json"),
        ("me@example.com", "me_example.com.json"),
        ("../../etc/passwd", ".._.._etc_passwd.json"),
        ("a b/c\\d", "a_b_c_d.json"),
        ("", "_.json"),
        ("ü-1.2_x", "_-1.2_x.json"),
    ],
)
def test_ledger_path_is_one_file_in_the_calls_folder(tmp_path, account, name):
    home = str(tmp_path / "home")
    path = ledger_path(home, account)
    assert path == os.path.join(home, "calls", name)
    assert os.path.dirname(path) == os.path.join(home, "calls")
